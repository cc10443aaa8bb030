// Volumes mounted in sandboxes (Sandbox.create({volumeMounts})): seen at
// the path asked for, shared by two live sandboxes, the same data through
// the content API both ways, kept after the sandbox is killed, and not
// deletable while mounted (409). Writes in the sandbox run as root: the
// volume's root belongs to root, as a new directory on a disk would.

import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'

import { Resources, STEP_MS, Sandbox, Volume, VolumeNotFoundError, rejectsWithStatus, rest, sh, volumeName } from './lib.mjs'

const res = new Resources()
after(() => res.dispose())

describe('volumeMounts', { timeout: STEP_MS }, () => {
  test('a mounted volume: read-write at its path, the same data as the content API', async () => {
    const vol = await res.volume()
    await vol.writeFile('/from-api.txt', 'written by the API')
    const sbx = await res.sandbox({ volumeMounts: { '/mnt/data': vol } })

    assert.equal(await sh(sbx, 'cat /mnt/data/from-api.txt'), 'written by the API')
    assert.match(await sh(sbx, 'grep " /mnt/data " /proc/mounts'), / rw[ ,]/, 'not mounted read-write')
    await sh(sbx, 'mkdir -p /mnt/data/made/in && echo -n from-the-sandbox > /mnt/data/made/in/sbx.txt && sync')
    assert.equal(await vol.readFile('/made/in/sbx.txt'), 'from-the-sandbox')
    const listed = await vol.list('/made', { depth: 2 })
    assert.ok(listed.some((e) => e.path === '/made/in/sbx.txt' && e.size === 16), JSON.stringify(listed))

    // The sandbox's detail and the volume's list both name the mount.
    const info = await rest('GET', `/sandboxes/${sbx.sandboxId}`)
    assert.deepEqual(info.data.volumeMounts, [{ name: vol.name, path: '/mnt/data' }])
    const vols = await rest('GET', '/volumes')
    assert.deepEqual(vols.data.find((v) => v.volumeID === vol.volumeId).sandboxes, [sbx.sandboxId])
  })

  test('by name, at several paths, and bad mounts refused', async () => {
    const a = await res.volume()
    const b = await res.volume()
    const sbx = await res.sandbox({ volumeMounts: { '/mnt/a': a.name, '/home/user/b': b } })
    await sh(sbx, 'echo -n A > /mnt/a/which && echo -n B > /home/user/b/which')
    assert.equal(await a.readFile('/which'), 'A')
    assert.equal(await b.readFile('/which'), 'B')

    for (const [what, mounts] of [
      ['an unknown volume', { '/mnt/x': volumeName('never-made') }],
      ['a relative path', { 'mnt/x': a.name }],
    ]) {
      await assert.rejects(res.sandbox({ volumeMounts: mounts }), (err) => /40[04]/.test(err.message), `${what} was mounted`)
    }
  })

  test('two sandboxes share one volume', async () => {
    const vol = await res.volume()
    const [one, two] = await Promise.all([
      res.sandbox({ volumeMounts: { '/mnt/shared': vol } }),
      res.sandbox({ volumeMounts: { '/data': vol } }),
    ])
    await sh(one, 'echo -n one-wrote > /mnt/shared/from-one.txt')
    assert.equal(await sh(two, 'cat /data/from-one.txt'), 'one-wrote')
    await sh(two, 'echo -n two-wrote > /data/from-two.txt')
    assert.equal(await sh(one, 'cat /mnt/shared/from-two.txt'), 'two-wrote')

    await vol.writeFile('/from-api.txt', 'api-wrote')
    assert.equal(await sh(one, 'cat /mnt/shared/from-api.txt'), 'api-wrote')
    assert.equal(await sh(two, 'cat /data/from-api.txt'), 'api-wrote')
    assert.equal(await vol.readFile('/from-one.txt'), 'one-wrote')
    assert.equal(await vol.readFile('/from-two.txt'), 'two-wrote')

    const vols = await rest('GET', '/volumes')
    assert.deepEqual(vols.data.find((v) => v.volumeID === vol.volumeId).sandboxes.sort(), [one.sandboxId, two.sandboxId].sort())
  })

  test('a volume outlives its sandbox; DELETE while mounted is 409', async () => {
    const vol = await res.volume()
    const first = await res.sandbox({ volumeMounts: { '/mnt/data': vol } })
    await sh(first, 'seq 1 1000 > /mnt/data/numbers.txt && sync')
    await rejectsWithStatus(Volume.destroy(vol.volumeId), 409)
    const { status: code, data } = await rest('DELETE', `/volumes/${vol.volumeId}`)
    assert.equal(code, 409)
    assert.equal(data.code, 409)
    assert.ok(data.message.includes(first.sandboxId) || /mount/i.test(data.message), `the refusal does not say why: ${data.message}`)

    await first.kill()
    const second = await res.sandbox({ volumeMounts: { '/mnt/again': vol } })
    assert.equal((await sh(second, 'wc -l < /mnt/again/numbers.txt')).trim(), '1000')
    await second.kill()

    assert.equal(await Volume.destroy(vol.volumeId), true)
    await assert.rejects(Volume.getInfo(vol.volumeId), VolumeNotFoundError)
    await assert.rejects(res.sandbox({ volumeMounts: { '/mnt/data': vol } }), (err) => /404/.test(err.message))
  })

  test('pause and resume keep the mount and its data', async () => {
    const vol = await res.volume()
    const sbx = await res.sandbox({ volumeMounts: { '/mnt/data': vol } })
    await sh(sbx, 'echo -n before-pause > /mnt/data/p.txt')
    await sbx.pause()
    await vol.writeFile('/while-paused.txt', 'written while paused')
    await rejectsWithStatus(Volume.destroy(vol.volumeId), 409) // a paused sandbox still mounts it
    const back = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 300_000 })
    assert.equal(await sh(back, 'cat /mnt/data/p.txt /mnt/data/while-paused.txt'), 'before-pausewritten while paused')
    await sh(back, 'echo -n after-resume > /mnt/data/r.txt')
    assert.equal(await vol.readFile('/r.txt'), 'after-resume')
  })
})
