// A template built on code-interpreter-v1 keeps its interpreter: the
// start command and ready check are inherited, and runCode sees what the
// build installed.

import assert from 'node:assert/strict'
import { after, test } from 'node:test'

import { Template } from 'e2b'
import { Sandbox } from '@e2b/code-interpreter'

const name = `e2e-ci-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
let sbx
after(async () => {
  await sbx?.kill().catch(() => {})
  await fetch(`${process.env.E2B_API_URL}/templates/${name}`, { method: 'DELETE', headers: { 'X-API-Key': process.env.E2B_API_KEY } }).catch(() => {})
})

test('runCode in a template built on code-interpreter-v1', { timeout: 300_000 }, async (t) => {
  if (!(await Template.exists('code-interpreter-v1'))) {
    t.skip('the server has no code-interpreter-v1 template')
    return
  }
  const tpl = Template()
    .fromTemplate('code-interpreter-v1')
    .runCmd('mkdir -p /opt/lib && printf "def greet():\\n    return \\"hi from the template\\"\\n" > /opt/lib/teamlib.py', { user: 'root' })
    .setEnvs({ PYTHONPATH: '/opt/lib' })
  await Template.build(tpl, name)
  sbx = await Sandbox.create(name, { timeoutMs: 120_000 })
  const ex = await sbx.runCode('import teamlib; teamlib.greet()')
  assert.equal(ex.error, undefined)
  assert.equal(ex.text, 'hi from the template')
})
