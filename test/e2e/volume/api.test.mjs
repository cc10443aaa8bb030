// Every method of the SDK's Volume class against warren: the control API
// (create, connect, getInfo, list, destroy) and the content API (list
// with depth, makeDir, getInfo, exists, updateMetadata, readFile,
// writeFile, remove), with the status codes E2B's own mock gives: 409 for
// an existing path without force, 404 for a missing parent or path.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'

import {
  Resources, STEP_MS, Volume, VolumeError, VolumeNotFoundError, VolumePathNotFoundError, AuthenticationError,
  rejectsWithStatus, rest, streamText, volumeName,
} from './lib.mjs'

const res = new Resources()
after(() => res.dispose())

describe('Volume control API', { timeout: STEP_MS }, () => {
  test('create, getInfo, connect, list and destroy', async () => {
    const name = volumeName('ctl')
    const vol = await res.volume(name)
    assert.equal(vol.name, name)
    assert.match(vol.volumeId, /^[a-zA-Z0-9_-]+$/)
    assert.ok(vol.token, 'no content token')

    const info = await Volume.getInfo(vol.volumeId)
    assert.deepEqual([info.volumeId, info.name, info.token], [vol.volumeId, name, vol.token])

    const again = await Volume.connect(vol.volumeId)
    assert.deepEqual([again.volumeId, again.name, again.token], [vol.volumeId, name, vol.token])
    await again.writeFile('/through-connect.txt', 'connected')
    assert.equal(await vol.readFile('/through-connect.txt'), 'connected')

    const listed = await Volume.list()
    assert.ok(listed.some((v) => v.volumeId === vol.volumeId && v.name === name), 'not listed')

    // warren's fields beside E2B's: the size limit, bytes in use, mounters.
    const { status, data } = await rest('GET', '/volumes')
    assert.equal(status, 200)
    const row = data.find((v) => v.volumeID === vol.volumeId)
    assert.ok(row.sizeMB > 0 && row.usedBytes >= 0 && Array.isArray(row.sandboxes ?? []) && row.createdAt, JSON.stringify(row))

    assert.equal(await Volume.destroy(vol.volumeId), true)
    assert.equal(await Volume.destroy(vol.volumeId), false)
    await assert.rejects(Volume.getInfo(vol.volumeId), VolumeNotFoundError)
    // The token went with the volume.
    await assert.rejects(vol.readFile('/through-connect.txt'))
  })

  test('names: unique in the team, and E2B\'s pattern', async () => {
    const name = volumeName('dup')
    await res.volume(name)
    await rejectsWithStatus(Volume.create(name), 409)
    for (const bad of ['has space', 'slash/inside', 'x'.repeat(64), '']) {
      await assert.rejects(Volume.create(bad), VolumeError, `name ${JSON.stringify(bad)} accepted`)
    }
  })
})

describe('Volume content API', { timeout: STEP_MS }, () => {
  let vol
  before(async () => { vol = await res.volume(volumeName('content')) })

  test('makeDir: parents with force, uid/gid/mode, 409 and 404 without force', async () => {
    const d = await vol.makeDir('/a/b/c', { force: true, uid: 1000, gid: 1001, mode: 0o750 })
    assert.equal(d.type, 'directory')
    assert.equal(d.path, '/a/b/c')
    assert.equal(d.name, 'c')
    assert.deepEqual([d.uid, d.gid, d.mode & 0o7777], [1000, 1001, 0o750])
    assert.ok(d.mtime instanceof Date && !isNaN(d.mtime))
    await vol.makeDir('/a/b/c', { force: true }) // existing, with force: no error
    await rejectsWithStatus(vol.makeDir('/a/b/c'), 409)
    await rejectsWithStatus(vol.makeDir('/missing/parent/dir'), 404, VolumePathNotFoundError)
    const plain = await vol.makeDir('/plain')
    assert.deepEqual([plain.uid, plain.gid, plain.mode & 0o777], [0, 0, 0o755])
  })

  test('writeFile string, bytes, Blob and stream; force to replace', async () => {
    await vol.makeDir('/w', { force: true })
    const s = await vol.writeFile('/w/string.txt', 'hello volume')
    assert.deepEqual([s.type, s.path, s.name, s.size], ['file', '/w/string.txt', 'string.txt', 12])
    assert.equal(s.mode & 0o777, 0o644)

    const bytes = new Uint8Array([0, 1, 2, 253, 254, 255])
    const b = await vol.writeFile('/w/bytes.bin', bytes, { uid: 1000, gid: 1000, mode: 0o600 })
    assert.deepEqual([b.size, b.uid, b.gid, b.mode & 0o777], [6, 1000, 1000, 0o600])

    await vol.writeFile('/w/blob.txt', new Blob(['from a blob']))
    const big = 'x'.repeat(3 << 20)
    const st = await vol.writeFile('/w/stream.txt', new Blob([big]).stream())
    assert.equal(st.size, big.length)

    await rejectsWithStatus(vol.writeFile('/w/string.txt', 'again'), 409)
    assert.equal(await vol.readFile('/w/string.txt'), 'hello volume', 'a refused write changed the file')
    const replaced = await vol.writeFile('/w/string.txt', 'replaced', { force: true })
    assert.equal(replaced.size, 8)
    await rejectsWithStatus(vol.writeFile('/nope/deeper/file.txt', 'x'), 404, VolumePathNotFoundError)
  })

  test('readFile text, bytes, blob and stream', async () => {
    await vol.writeFile('/r.txt', 'read me ✓', { force: true })
    assert.equal(await vol.readFile('/r.txt'), 'read me ✓')
    assert.equal(await vol.readFile('/r.txt', { format: 'text' }), 'read me ✓')
    const bytes = await vol.readFile('/r.txt', { format: 'bytes' })
    assert.ok(bytes instanceof Uint8Array)
    assert.equal(new TextDecoder().decode(bytes), 'read me ✓')
    const blob = await vol.readFile('/r.txt', { format: 'blob' })
    assert.equal(await blob.text(), 'read me ✓')
    assert.equal(await streamText(await vol.readFile('/r.txt', { format: 'stream' })), 'read me ✓')
    await rejectsWithStatus(vol.readFile('/not-there.txt'), 404, VolumePathNotFoundError)
    await rejectsWithStatus(vol.readFile('/not-there.txt', { format: 'stream' }), 404, VolumePathNotFoundError)
  })

  test('list with depth, getInfo and exists', async () => {
    await vol.makeDir('/tree/sub/deep', { force: true })
    await vol.writeFile('/tree/top.txt', 'top', { force: true })
    await vol.writeFile('/tree/sub/deep/leaf.txt', 'leaf', { force: true })

    const one = await vol.list('/tree')
    assert.deepEqual(one.map((e) => e.path).sort(), ['/tree/sub', '/tree/top.txt'])
    const byPath = Object.fromEntries(one.map((e) => [e.path, e]))
    assert.equal(byPath['/tree/sub'].type, 'directory')
    assert.equal(byPath['/tree/top.txt'].type, 'file')
    assert.equal(byPath['/tree/top.txt'].size, 3)

    const all = await vol.list('/tree', { depth: 3 })
    assert.deepEqual(all.map((e) => e.path).sort(),
      ['/tree/sub', '/tree/sub/deep', '/tree/sub/deep/leaf.txt', '/tree/top.txt'])
    const two = await vol.list('/tree', { depth: 2 })
    assert.ok(!two.some((e) => e.path === '/tree/sub/deep/leaf.txt'), 'depth 2 went three levels down')

    const info = await vol.getInfo('/tree/sub/deep/leaf.txt')
    assert.deepEqual([info.name, info.type, info.size], ['leaf.txt', 'file', 4])
    for (const t of [info.atime, info.mtime, info.ctime]) assert.ok(t instanceof Date && !isNaN(t))
    assert.equal((await vol.getInfo('/')).type, 'directory')

    assert.equal(await vol.exists('/tree/top.txt'), true)
    assert.equal(await vol.exists('/tree/sub'), true)
    assert.equal(await vol.exists('/tree/nothing'), false)
    await rejectsWithStatus(vol.list('/tree/nothing'), 404, VolumePathNotFoundError)
    await rejectsWithStatus(vol.getInfo('/tree/nothing'), 404, VolumePathNotFoundError)
  })

  test('updateMetadata', async () => {
    await vol.writeFile('/meta.txt', 'm', { force: true })
    const e = await vol.updateMetadata('/meta.txt', { uid: 1000, gid: 1002, mode: 0o640 })
    assert.deepEqual([e.uid, e.gid, e.mode & 0o777], [1000, 1002, 0o640])
    const modeOnly = await vol.updateMetadata('/meta.txt', { mode: 0o600 })
    assert.deepEqual([modeOnly.uid, modeOnly.gid, modeOnly.mode & 0o777], [1000, 1002, 0o600])
    assert.deepEqual((await vol.getInfo('/meta.txt')).mode & 0o777, 0o600)
    await rejectsWithStatus(vol.updateMetadata('/meta-missing.txt', { mode: 0o600 }), 404, VolumePathNotFoundError)
  })

  test('remove a file and a directory with everything in it', async () => {
    await vol.makeDir('/gone/inner', { force: true })
    await vol.writeFile('/gone/inner/f.txt', 'f', { force: true })
    await vol.writeFile('/gone-file.txt', 'f', { force: true })
    await vol.remove('/gone-file.txt')
    assert.equal(await vol.exists('/gone-file.txt'), false)
    await vol.remove('/gone')
    assert.equal(await vol.exists('/gone'), false)
    await rejectsWithStatus(vol.remove('/gone'), 404, VolumePathNotFoundError)
    await assert.rejects(vol.remove('/'), VolumeError, 'the root was removed')
    assert.equal((await vol.getInfo('/')).type, 'directory')
  })

  test('paths stay inside the volume', async () => {
    await vol.writeFile('/inside.txt', 'inside', { force: true })
    // ".." is cleaned against the volume's root, or refused: never the host's files.
    for (const p of ['/../../../../etc/passwd', '../../etc/hostname', '/proc/self/environ']) {
      await assert.rejects(vol.readFile(p), VolumeError, `${p} was read`)
    }
    const climbed = await vol.readFile('/../inside.txt').catch((e) => (e instanceof VolumeError ? 'refused' : e))
    assert.ok(climbed === 'inside' || climbed === 'refused', `/../inside.txt gave ${climbed}`)
  })

  test('the token: none is 401, a wrong one 403', async () => {
    const tokenless = new Volume(vol.volumeId, vol.name, '', vol.domain)
    await assert.rejects(tokenless.list('/'), AuthenticationError)
    const other = await res.volume(volumeName('other'))
    const crossed = new Volume(vol.volumeId, vol.name, other.token, vol.domain)
    await rejectsWithStatus(crossed.list('/'), 403)
    await rejectsWithStatus(crossed.readFile('/inside.txt'), 403)
    await rejectsWithStatus(crossed.writeFile('/crossed.txt', 'no'), 403)
    assert.equal(await vol.exists('/crossed.txt'), false)
  })
})
