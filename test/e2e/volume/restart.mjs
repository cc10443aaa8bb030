// Across a server restart (volume_test.go runs this twice around it):
// `node volume/restart.mjs before` makes a volume, a running and a paused
// sandbox mounting it, and writes through both and the content API;
// `after` checks that the data, the mounts and the token are all still
// there and that the paused sandbox resumes with its mount. The state
// goes through the JSON file E2E_STATE.

import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'

import { Sandbox, Volume, rest, sh, volumeName } from './lib.mjs'

const stateFile = process.env.E2E_STATE
assert.ok(stateFile, 'E2E_STATE must name the state file')
const phase = process.argv[2]

async function before() {
  const vol = await Volume.create(volumeName('restart'))
  const running = await Sandbox.create({ timeoutMs: 600_000, volumeMounts: { '/mnt/data': vol } })
  const paused = await Sandbox.create({ timeoutMs: 600_000, volumeMounts: { '/mnt/other': vol } })
  await sh(running, 'echo -n from-running > /mnt/data/running.txt && sync')
  await sh(paused, 'echo -n from-paused > /mnt/other/paused.txt && sync')
  await vol.writeFile('/api.txt', 'from-api')
  assert.equal(await paused.pause(), true)
  writeFileSync(stateFile, JSON.stringify({ volumeId: vol.volumeId, name: vol.name, token: vol.token, running: running.sandboxId, paused: paused.sandboxId }))
  console.log(`before the restart: volume ${vol.volumeId}, running ${running.sandboxId}, paused ${paused.sandboxId}`)
}

async function after() {
  const st = JSON.parse(readFileSync(stateFile, 'utf8'))
  const vol = await Volume.connect(st.volumeId)
  assert.equal(vol.token, st.token, 'the token changed across the restart')
  assert.equal(await vol.readFile('/running.txt'), 'from-running')
  assert.equal(await vol.readFile('/paused.txt'), 'from-paused')
  assert.equal(await vol.readFile('/api.txt'), 'from-api')

  const detail = await rest('GET', `/sandboxes/${st.running}`)
  assert.equal(detail.status, 200, JSON.stringify(detail.data))
  assert.deepEqual(detail.data.volumeMounts, [{ name: st.name, path: '/mnt/data' }])
  const running = await Sandbox.connect(st.running, { timeoutMs: 300_000 })
  assert.equal(await sh(running, 'cat /mnt/data/running.txt /mnt/data/api.txt'), 'from-runningfrom-api')
  await sh(running, 'echo -n after-restart > /mnt/data/after.txt')
  assert.equal(await vol.readFile('/after.txt'), 'after-restart')

  assert.equal((await Sandbox.getInfo(st.paused)).state, 'paused')
  await vol.writeFile('/while-down.txt', 'seen on resume')
  const resumed = await Sandbox.connect(st.paused, { timeoutMs: 300_000 })
  assert.equal(await sh(resumed, 'cat /mnt/other/paused.txt /mnt/other/after.txt /mnt/other/while-down.txt'),
    'from-pausedafter-restartseen on resume')
  assert.deepEqual((await rest('GET', '/volumes')).data.find((v) => v.volumeID === st.volumeId).sandboxes.sort(),
    [st.running, st.paused].sort())

  await Promise.all([running.kill(), resumed.kill()])
  assert.equal(await Volume.destroy(st.volumeId), true)
  console.log('after the restart: data, mounts and token kept; the paused sandbox resumed with its mount')
}

if (phase === 'before') await before()
else if (phase === 'after') await after()
else throw new Error(`usage: node volume/restart.mjs before|after (got ${phase})`)
