// uploadUrl/downloadUrl: signed URLs used with plain fetch and no routing
// headers, and signatures that must be rejected.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'

import { Sandboxes } from '../lib/env.mjs'

const pool = new Sandboxes()
let sbx

before(async () => {
  sbx = await pool.create({ timeoutMs: 120_000 })
})
after(() => pool.killAll())

function uploadForm(text, filename = 'upload.txt') {
  const form = new FormData()
  form.append('file', new Blob([text]), filename)
  return form
}

/** Replace the signature of a signed URL with a well-formed but wrong one. */
function forge(url) {
  const u = new URL(url)
  assert.ok(u.searchParams.get('signature'), `URL is signed: ${url}`)
  u.searchParams.set('signature', 'v1_' + 'A'.repeat(43))
  return u.toString()
}

describe('signed file URLs', { timeout: 60_000 }, () => {
  test('upload then download with plain fetch', async () => {
    const up = await sbx.uploadUrl('signed/up.txt')
    const res = await fetch(up, { method: 'POST', body: uploadForm('via upload url') })
    assert.equal(res.status, 200, await res.clone().text())
    const written = await res.json()
    assert.equal(written[0].path, '/home/user/signed/up.txt')
    assert.equal(await sbx.files.read('signed/up.txt'), 'via upload url')

    const down = await sbx.downloadUrl('signed/up.txt')
    const got = await fetch(down)
    assert.equal(got.status, 200)
    assert.equal(await got.text(), 'via upload url')
  })

  test('URLs with an expiration work before it passes', async () => {
    await sbx.files.write('/tmp/expiring.txt', 'still valid')
    const down = await sbx.downloadUrl('/tmp/expiring.txt', { useSignatureExpiration: 120 })
    assert.ok(new URL(down).searchParams.get('signature_expiration'))
    const got = await fetch(down)
    assert.equal(got.status, 200)
    assert.equal(await got.text(), 'still valid')

    const tampered = new URL(down)
    tampered.searchParams.set('signature_expiration', String(Number(tampered.searchParams.get('signature_expiration')) + 3600))
    assert.equal((await fetch(tampered)).status, 401, 'a changed expiration invalidates the signature')
  })

  test('a forged download signature is rejected', async () => {
    await sbx.files.write('/tmp/private.txt', 'secret')
    const down = await sbx.downloadUrl('/tmp/private.txt')
    const res = await fetch(forge(down))
    assert.equal(res.status, 401)
    assert.doesNotMatch(await res.text(), /secret/)

    const other = new URL(down)
    other.searchParams.set('path', '/etc/hostname')
    assert.equal((await fetch(other)).status, 401, 'a signature is bound to its path')
  })

  test('a forged upload signature is rejected and writes nothing', async () => {
    await sbx.files.write('/tmp/keep.txt', 'original')
    const up = await sbx.uploadUrl('/tmp/keep.txt')
    const res = await fetch(forge(up), { method: 'POST', body: uploadForm('overwritten') })
    assert.equal(res.status, 401)
    assert.equal(await sbx.files.read('/tmp/keep.txt'), 'original')

    const read = await sbx.downloadUrl('/tmp/keep.txt')
    const asWrite = new URL(up)
    asWrite.searchParams.set('signature', new URL(read).searchParams.get('signature'))
    const res2 = await fetch(asWrite, { method: 'POST', body: uploadForm('overwritten') })
    assert.equal(res2.status, 401, 'a read signature does not allow a write')
    assert.equal(await sbx.files.read('/tmp/keep.txt'), 'original')
  })

  test('a missing signature is rejected', async () => {
    const u = new URL(await sbx.downloadUrl('/tmp/keep.txt'))
    u.searchParams.delete('signature')
    const res = await fetch(u)
    assert.ok(res.status >= 400 && res.status < 600, `unsigned URL got ${res.status}`)
    assert.doesNotMatch(await res.text(), /original/)
  })
})
