// The client side of TestCluster (cluster_test.go): the official SDK,
// pointed at the API process only, against three nodes. The Go test does
// what the SDK cannot (SIGKILL a node, look up placement in the store);
// the two talk over stdio: this script prints `@@ {"step": ...}` and
// reads one JSON line back before it goes on.

import assert from 'node:assert/strict'
import readline from 'node:readline'

import { Sandbox, sdk, uniqueTag, waitFor } from '../lib/env.mjs'

const { NotFoundError } = sdk

const count = Number(process.env.E2E_CLUSTER_SANDBOXES || 6)
const recreate = Number(process.env.E2E_CLUSTER_RECREATE || 3)
const goneWithinMs = Number(process.env.E2E_CLUSTER_GONE_WITHIN_MS || 20_000)
const tag = uniqueTag('cluster')
const created = []

const replies = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]()

/** ask tells the Go side that step is reached and returns its reply. */
async function ask(step, data = {}) {
  console.log('@@ ' + JSON.stringify({ step, ...data }))
  const { value, done } = await replies.next()
  if (done) throw new Error(`no reply to ${step}`)
  return JSON.parse(value)
}

async function createSome(n) {
  const made = await Promise.all(
    Array.from({ length: n }, () => Sandbox.create('base', { metadata: { run: tag }, timeoutMs: 600_000 })),
  )
  created.push(...made.map((s) => s.sandboxId))
  return made
}

async function listedIds() {
  const ids = []
  const paginator = Sandbox.list({ query: { metadata: { run: tag } } })
  while (paginator.hasNext) ids.push(...(await paginator.nextItems()).map((s) => s.sandboxId))
  return ids.sort()
}

/** use runs a command and round-trips a file in sbx, through the API's forwarding to its node. */
async function use(sbx, word) {
  const r = await sbx.commands.run(`echo ${word} && cat /etc/hostname`)
  assert.equal(r.exitCode, 0)
  assert.equal(r.stdout.split('\n')[0], word)
  const path = `/home/user/${word}.txt`
  const body = `${word} in ${sbx.sandboxId}`
  await sbx.files.write(path, body)
  assert.equal(await sbx.files.read(path), body)
  const res = await fetch(await sbx.downloadUrl(path)) // a signed URL: no routing header but the Host
  assert.equal(res.status, 200)
  assert.equal(await res.text(), body)
}

/** stream runs a 12 s command in sbx and resolves to its ticks; started resolves at the first. */
async function stream(sbx) {
  const ticks = []
  let first
  const started = new Promise((resolve) => (first = resolve))
  const handle = await sbx.commands.run('for i in $(seq 1 12); do echo tick $i; sleep 1; done', {
    background: true,
    timeoutMs: 120_000,
    onStdout: (out) => {
      ticks.push(...out.trim().split('\n'))
      first()
    },
  })
  const done = handle.wait().then((r) => ({ r, ticks }))
  return { started, done }
}

async function main() {
  const first = await createSome(count)
  await Promise.all(first.map((s, i) => use(s, `first${i}`)))
  assert.deepEqual(await listedIds(), created.slice().sort(), 'Sandbox.list sees every node')

  const { victims, streamOn, survivors } = await ask('created', { ids: created })
  const streaming = await stream(first.find((s) => s.sandboxId === streamOn))
  await streaming.started
  await ask('streaming')
  const killedAt = Date.now()

  const gone = waitFor(async () => (await listedIds()).every((id) => !victims.includes(id)), {
    timeoutMs: goneWithinMs,
    intervalMs: 200,
    message: `the dead node's sandboxes ${victims} to leave Sandbox.list`,
  }).then(() => Date.now() - killedAt)
  const [{ r, ticks }, goneMs] = await Promise.all([streaming.done, gone])
  assert.equal(r.exitCode, 0)
  assert.deepEqual(ticks, Array.from({ length: 12 }, (_, i) => `tick ${i + 1}`))
  console.log(`the dead node's sandboxes left Sandbox.list ${goneMs} ms after its SIGKILL`)

  for (const id of victims) {
    await assert.rejects(Sandbox.getInfo(id), NotFoundError, `getInfo(${id})`)
    await assert.rejects(Sandbox.connect(id), NotFoundError, `connect(${id})`)
  }
  for (const id of survivors) await use(await Sandbox.connect(id), `after${survivors.indexOf(id)}`)

  const again = await createSome(recreate)
  await Promise.all(again.map((s, i) => use(s, `again${i}`)))
  await ask('recreated', { ids: again.map((s) => s.sandboxId), goneMs })
  const alive = created.filter((id) => !victims.includes(id)).sort()
  assert.deepEqual(await listedIds(), alive)
}

// Exit explicitly: stdin, open until the Go side closes it, and the SDK's
// stream timers would keep node running.
let code = 0
try {
  await main()
} catch (err) {
  console.error(err)
  code = 1
} finally {
  await Promise.all(created.map((id) => Sandbox.kill(id).catch(() => false)))
}
process.exit(code)
