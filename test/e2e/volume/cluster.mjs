// One volume on two nodes (volume_test.go's TestVolumesCluster): made
// through the API role, mounted by a sandbox created on node A and one on
// node B, each reading what the other wrote; the API role's content API
// sees both and what it writes reaches both.

import assert from 'node:assert/strict'

import { Sandbox, Volume, rest, sh, volumeName } from './lib.mjs'

const nodeA = process.env.E2E_NODE_A_URL
const nodeB = process.env.E2E_NODE_B_URL
assert.ok(nodeA && nodeB, 'E2E_NODE_A_URL and E2E_NODE_B_URL must be set')

const vol = await Volume.create(volumeName('cluster'))
const made = []
try {
  const on = (url, path) => Sandbox.create({ apiUrl: url, sandboxUrl: url, timeoutMs: 300_000, volumeMounts: { [path]: vol } })
  const a = await on(nodeA, '/mnt/data')
  made.push(a.sandboxId)
  const b = await on(nodeB, '/data')
  made.push(b.sandboxId)

  await sh(a, 'echo -n written-on-a > /mnt/data/a.txt && sync')
  assert.equal(await sh(b, 'cat /data/a.txt'), 'written-on-a')
  await sh(b, 'mkdir -p /data/dir && echo -n written-on-b > /data/dir/b.txt && sync')
  assert.equal(await sh(a, 'cat /mnt/data/dir/b.txt'), 'written-on-b')

  // The content API through the API role.
  assert.equal(await vol.readFile('/a.txt'), 'written-on-a')
  assert.equal(await vol.readFile('/dir/b.txt'), 'written-on-b')
  await vol.writeFile('/from-api.txt', 'written-by-the-api')
  assert.equal(await sh(a, 'cat /mnt/data/from-api.txt'), 'written-by-the-api')
  assert.equal(await sh(b, 'cat /data/from-api.txt'), 'written-by-the-api')
  const listed = await vol.list('/', { depth: 2 })
  assert.deepEqual(listed.map((e) => e.path).filter((p) => !p.startsWith('/lost+found')).sort(),
    ['/a.txt', '/dir', '/dir/b.txt', '/from-api.txt'])

  const row = (await rest('GET', '/volumes')).data.find((v) => v.volumeID === vol.volumeId)
  assert.deepEqual(row.sandboxes.sort(), [a.sandboxId, b.sandboxId].sort())
  const { status } = await rest('DELETE', `/volumes/${vol.volumeId}`)
  assert.equal(status, 409, 'deleted while mounted on two nodes')

  await Promise.all([a.kill(), b.kill()])
  made.length = 0
  assert.equal(await Volume.destroy(vol.volumeId), true)
  console.log(`volume ${vol.volumeId}: shared by sandboxes on two nodes and the API role's content API`)
} finally {
  await Promise.all(made.map((id) => Sandbox.kill(id).catch(() => false)))
  await Volume.destroy(vol.volumeId).catch(() => false)
}
