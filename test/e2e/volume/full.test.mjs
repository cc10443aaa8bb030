// A full volume (the server runs with --volume-size-mb 16): dd in the
// sandbox ends with ENOSPC at the volume's size, the host's disk does not
// fill, the content API answers 507, and removing the file frees it.

import assert from 'node:assert/strict'
import { statfsSync } from 'node:fs'
import { after, describe, test } from 'node:test'

import { Resources, STEP_MS, rejectsWithStatus, rest, sh } from './lib.mjs'

const res = new Resources()
after(() => res.dispose())

const sizeMB = Number(process.env.E2E_VOLUME_SIZE_MB || 16)
const dataDir = process.env.E2E_DATA_DIR

function freeBytes() {
  const s = statfsSync(dataDir)
  return s.bavail * s.bsize
}

describe('a full volume', { timeout: STEP_MS }, () => {
  test('ENOSPC inside, 507 outside, the host untouched', async (t) => {
    assert.ok(dataDir, 'E2E_DATA_DIR must name the server data dir')
    const vol = await res.volume()
    const sbx = await res.sandbox({ volumeMounts: { '/mnt/data': vol } })
    const want = 4 * sizeMB // four times the limit
    const freeBefore = freeBytes()
    const out = await sh(sbx, `dd if=/dev/zero of=/mnt/data/fill bs=1M count=${want} conv=fsync 2>&1; echo rc=$?`)
    assert.match(out, /No space left on device/, out)
    assert.doesNotMatch(out, /rc=0$/, out)
    const written = Number((await sh(sbx, 'stat -c %s /mnt/data/fill')).trim())
    assert.ok(written <= sizeMB << 20, `${written} bytes written into a ${sizeMB} MiB volume`)
    // Other engineers' runs share the disk: the bound is loose, but a volume
    // that spilled onto the host would take the whole 4x.
    const took = freeBefore - freeBytes()
    t.diagnostic(`host free space went down by ${(took / (1 << 20)).toFixed(1)} MiB for ${want} MiB asked`)
    assert.ok(took < (want - sizeMB) << 20, `the host lost ${took} bytes`)

    const { data } = await rest('GET', '/volumes')
    const row = data.find((v) => v.volumeID === vol.volumeId)
    assert.ok(row.usedBytes > (sizeMB >> 1) << 20 && row.usedBytes <= (sizeMB + 2) << 20, `usedBytes ${row.usedBytes}`)
    assert.equal(row.sizeMB, sizeMB)

    await rejectsWithStatus(vol.writeFile('/more.bin', new Uint8Array(2 << 20)), 507)
    const r = await fetch(`${process.env.E2B_VOLUME_API_URL}/volumecontent/${vol.volumeId}/file?path=/raw.bin`, {
      method: 'PUT', headers: { Authorization: `Bearer ${vol.token}`, 'Content-Type': 'application/octet-stream' },
      body: new Uint8Array(2 << 20), signal: AbortSignal.timeout(30_000),
    })
    assert.equal(r.status, 507)
    const body = await r.json()
    assert.deepEqual([body.code, typeof body.message], [507, 'string'])

    // Removing the file frees its space for both sides at once, also on
    // runsc, whose dentry cache keeps the file open while the sandbox runs
    // (the content API empties a file before it unlinks it).
    await vol.remove('/fill')
    await vol.writeFile('/more.bin', new Uint8Array(2 << 20)).catch(async (err) => {
      const used = (await rest('GET', '/volumes')).data.find((v) => v.volumeID === vol.volumeId)?.usedBytes
      assert.fail(`removing /fill through the content API freed nothing while the sandbox that wrote it runs (usedBytes ${used}): ${err.message}`)
    })
    assert.equal(await sh(sbx, 'stat -c %s /mnt/data/more.bin'), `${2 << 20}\n`)
  })
})
