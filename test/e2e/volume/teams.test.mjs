// Volumes are a team's own: another team's key gets 404 for their id (never
// 403, so ids do not leak), cannot mount them, and may use the same name
// for its own; a volume's token opens that volume only (403 on another's).

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'

import { Resources, STEP_MS, Volume, VolumeNotFoundError, newTeamKey, rejectsWithStatus, rest, sh, volumeName } from './lib.mjs'

const res = new Resources()
after(() => res.dispose())

describe("another team's key", { timeout: STEP_MS }, () => {
  let alpha, beta, vol
  before(async () => {
    alpha = await newTeamKey(res, volumeName('alpha'))
    beta = await newTeamKey(res, volumeName('beta'))
    vol = await res.volume(volumeName('alphas'), { apiKey: alpha })
    await vol.writeFile('/secret.txt', 'alpha only')
  })

  test('cannot see, get or delete it: 404', async () => {
    await assert.rejects(Volume.getInfo(vol.volumeId, { apiKey: beta }), VolumeNotFoundError)
    await assert.rejects(Volume.connect(vol.volumeId, { apiKey: beta }), VolumeNotFoundError)
    assert.equal(await Volume.destroy(vol.volumeId, { apiKey: beta }), false)
    const listed = await Volume.list({ apiKey: beta })
    assert.ok(!listed.some((v) => v.volumeId === vol.volumeId), 'listed to another team')
    for (const method of ['GET', 'DELETE']) {
      const r = await rest(method, `/volumes/${vol.volumeId}`, { key: beta })
      assert.equal(r.status, 404, `${method}: ${JSON.stringify(r.data)}`)
      assert.equal(r.data.code, 404)
      assert.ok(!JSON.stringify(r.data).includes(vol.token), 'the token leaked')
    }
    // Still there for its owner.
    assert.equal((await Volume.getInfo(vol.volumeId, { apiKey: alpha })).name, vol.name)
  })

  test('cannot mount it: 404; the same name is its own volume', async () => {
    await assert.rejects(res.sandbox({ apiKey: beta, volumeMounts: { '/mnt/data': vol.name } }), (err) => /404/.test(err.message))
    const own = await res.volume(vol.name, { apiKey: beta })
    assert.notEqual(own.volumeId, vol.volumeId)
    const sbx = await res.sandbox({ apiKey: beta, volumeMounts: { '/mnt/data': vol.name } })
    assert.equal(await sh(sbx, 'ls -A /mnt/data | grep -v lost+found | wc -l'), '0\n', "another team's files are visible")
    assert.equal(await sh(sbx, 'cat /mnt/data/secret.txt 2>/dev/null || echo -n absent'), 'absent')
  })

  test("another volume's token is 403 on the content API", async () => {
    const betas = await res.volume(volumeName('betas'), { apiKey: beta })
    const crossed = new Volume(vol.volumeId, vol.name, betas.token, vol.domain)
    await rejectsWithStatus(crossed.readFile('/secret.txt'), 403)
    await rejectsWithStatus(crossed.list('/'), 403)
    await rejectsWithStatus(crossed.remove('/secret.txt'), 403)
    await rejectsWithStatus(crossed.updateMetadata('/secret.txt', { mode: 0o777 }), 403)
    assert.equal(await vol.readFile('/secret.txt'), 'alpha only')
  })

  test('the admin key sees every team', async () => {
    const info = await Volume.getInfo(vol.volumeId)
    assert.equal(info.volumeId, vol.volumeId)
  })
})
