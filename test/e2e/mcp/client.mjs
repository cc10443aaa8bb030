// Drives `warren mcp` with the official TypeScript MCP SDK, over stdio (it
// spawns $WARREN_BIN mcp with the E2B_* variables) or streamable HTTP (it
// connects to $MCP_URL with $MCP_KEY), as MCP_TRANSPORT says. It calls every tool,
// checks the answers, and prints SESSION_SANDBOX=<id>, the sandbox the
// server kept for the session, for the Go test to check that it is killed
// once the client has closed. TestMCP (mcp_test.go) runs it.

import assert from 'node:assert/strict'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

const mode = process.env.MCP_TRANSPORT

function transport() {
  if (mode === 'stdio') {
    const env = { PATH: process.env.PATH }
    for (const k of ['E2B_API_URL', 'E2B_API_KEY', 'E2B_SANDBOX_URL', 'E2B_DOMAIN']) env[k] = process.env[k]
    return new StdioClientTransport({ command: process.env.WARREN_BIN, args: ['mcp'], env, stderr: 'inherit' })
  }
  if (mode === 'http') {
    // warren mcp --listen takes the key as the REST API does.
    const headers = { Authorization: `Bearer ${process.env.MCP_KEY}` }
    return new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), { requestInit: { headers } })
  }
  throw new Error(`MCP_TRANSPORT must be stdio or http, not ${mode}`)
}

const client = new Client({ name: 'warren-e2e', version: '1.0.0' })
const tr = transport()
await client.connect(tr)

// call calls a tool and returns its result and text; wantError says
// whether it should be a tool error.
async function call(name, args, wantError = false) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 180_000 })
  const text = res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n')
  assert.equal(!!res.isError, wantError, `${name} ${JSON.stringify(args)}: isError ${res.isError}: ${text}`)
  console.log(`ok - ${name} ${JSON.stringify(args).slice(0, 80)}${wantError ? ` -> ${text.slice(0, 200)}` : ''}`)
  return { res, text, out: res.structuredContent }
}

const { tools } = await client.listTools()
assert.deepEqual(tools.map((t) => t.name).sort(),
  ['create_sandbox', 'kill_sandbox', 'list_files', 'read_file', 'run_code', 'run_command', 'write_file'])
for (const t of tools) assert.ok(t.description && t.inputSchema.type === 'object', t.name)

// run_code: a value, a plot as an image, an exception as a result.
let r = await call('run_code', { code: '1+1' })
assert.match(r.text, /\[result\]\n2\b/)
assert.ok(r.out.results.includes('2'), JSON.stringify(r.out))
r = await call('run_code', {
  code: 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [4, 5, 6])\nplt.title("t")\nplt.show()',
})
const img = r.res.content.find((c) => c.type === 'image')
assert.ok(img, `an image item: ${JSON.stringify(r.res.content.map((c) => c.type))}`)
assert.equal(img.mimeType, 'image/png')
assert.deepEqual([...Buffer.from(img.data, 'base64').subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47])
r = await call('run_code', { code: '1/0' })
assert.equal(r.out.error.name, 'ZeroDivisionError')
assert.match(r.text, /ZeroDivisionError/)
assert.match(r.out.error.traceback, /1\/0/)
assert.doesNotMatch(r.out.error.traceback, /\x1b/, 'no terminal colour codes')

// run_command: output, a failing command's exit code, cwd and envs.
r = await call('run_command', { command: 'echo hello' })
assert.equal(r.out.stdout, 'hello\n')
assert.equal(r.out.exitCode, 0)
r = await call('run_command', { command: 'echo oops >&2; exit 3' })
assert.equal(r.out.exitCode, 3)
assert.equal(r.out.stderr, 'oops\n')
assert.match(r.text, /exit code: 3/)
r = await call('run_command', { command: 'echo $GREETING; pwd', cwd: '/tmp', envs: { GREETING: 'hi' } })
assert.equal(r.out.stdout, 'hi\n/tmp\n')
r = await call('run_command', { command: 'printf %s "$E2B_SANDBOX_ID"' })
const session = r.out.stdout
assert.ok(session, 'the session sandbox has an id')

// Files: write, read back, list; a missing file is a tool error.
await call('write_file', { path: '/home/user/mcp/hello.txt', content: 'hello from mcp' })
r = await call('read_file', { path: '/home/user/mcp/hello.txt' })
assert.equal(r.text, 'hello from mcp')
r = await call('list_files', { path: '/home/user/mcp' })
assert.deepEqual(r.out.entries.map((e) => [e.name, e.type, e.size]), [['hello.txt', 'file', 14]])
r = await call('read_file', { path: '/home/user/mcp/missing.txt' }, true)
assert.match(r.text, /missing\.txt/)

// A sandbox of its own: used by id, killed, then gone.
r = await call('create_sandbox', { template: 'base', timeout: 120, metadata: { from: 'mcp' } })
const other = r.out.sandboxId
assert.ok(other && other !== session)
r = await call('run_command', { command: 'printf %s "$E2B_SANDBOX_ID"', sandboxId: other })
assert.equal(r.out.stdout, other)
r = await call('run_code', { code: '1', sandboxId: other }, true)
assert.match(r.text, /code interpreter/)
await call('kill_sandbox', { sandboxId: other })
r = await call('run_command', { command: 'true', sandboxId: other }, true)
assert.match(r.text, new RegExp(other))

console.log(`SESSION_SANDBOX=${session}`)
// Over HTTP the client ends its session with a DELETE, unless
// MCP_KEEP_SESSION asks it to leave the session to time out.
if (mode === 'http' && !process.env.MCP_KEEP_SESSION) await tr.terminateSession()
await client.close()
