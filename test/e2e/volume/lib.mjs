// Shared setup of the volume tests: the SDK's Volume class, the server's
// content API address (E2B_VOLUME_API_URL: the SDK would otherwise go to
// https://api.<domain>), team keys made with the admin key, and a
// tracker that destroys what a file made, whatever happened.

import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'

import { apiKey, apiUrl, sdk, Sandbox } from '../lib/env.mjs'

if (!process.env.E2B_VOLUME_API_URL) {
  throw new Error('E2B_VOLUME_API_URL must be set: the SDK would send volume content to https://api.<domain>')
}

export const { Volume, VolumeError, VolumeNotFoundError, VolumePathNotFoundError, AuthenticationError } = sdk
export { apiKey, apiUrl, Sandbox }

/** STEP_MS bounds one test; a hung server fails it rather than the run. */
export const STEP_MS = 90_000

/** A volume name unique to this run (E2B's pattern: [a-zA-Z0-9_-], at most 63). */
export function volumeName(prefix = 'vol') {
  return `${prefix}-${randomBytes(5).toString('hex')}`
}

/**
 * status is the HTTP status behind an SDK error: the SDK answers a 404 with
 * its own not-found classes, any other code at the start of the message
 * ("409: ...").
 */
export function status(err) {
  if (err instanceof VolumePathNotFoundError || err instanceof VolumeNotFoundError) return 404
  const m = /^(\d{3}):/.exec(err?.message ?? '')
  return m ? Number(m[1]) : undefined
}

/** rejectsWithStatus checks that promise rejects with a VolumeError of HTTP status code. */
export async function rejectsWithStatus(promise, code, cls = VolumeError) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof cls, `expected ${cls.name}, got ${err?.constructor?.name}: ${err?.message}`)
    if (code !== undefined) assert.equal(status(err), code, `status of ${err.message}`)
    return true
  })
}

/** rest calls the control API with a key (the admin's by default). */
export async function rest(method, path, { key = apiKey, body, token } = {}) {
  const headers = {}
  if (token) headers.Authorization = `Bearer ${token}`
  else headers['X-API-KEY'] = key
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(apiUrl + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000),
  })
  const text = await res.text()
  let data = text
  try { data = text ? JSON.parse(text) : null } catch { /* not JSON: kept as text */ }
  return { status: res.status, data }
}

/** newTeamKey makes a key of a new team with the admin key; Resources.dispose deletes it. */
export async function newTeamKey(res, team) {
  const { status: code, data } = await rest('POST', '/api-keys', { body: { name: volumeName('key'), team } })
  assert.equal(code, 201, JSON.stringify(data))
  res.keys.push(data.id)
  return data.key
}

/** sh runs a shell command as root (the volume's root is root's until chowned) and returns its stdout. */
export async function sh(sbx, cmd) {
  const r = await sbx.commands.run(cmd, { user: 'root', timeoutMs: 60_000 })
  return r.stdout
}

/** Resources tracks the sandboxes, volumes and keys a file made and removes them at the end. */
export class Resources {
  sandboxes = []
  volumes = [] // [id, apiKey]
  keys = []

  async sandbox(opts) {
    const sbx = await Sandbox.create({ timeoutMs: 300_000, ...opts })
    this.sandboxes.push([sbx.sandboxId, opts?.apiKey])
    return sbx
  }

  async volume(name = volumeName(), opts) {
    const vol = await Volume.create(name, opts)
    this.volumes.push([vol.volumeId, opts?.apiKey])
    return vol
  }

  async dispose() {
    await Promise.all(this.sandboxes.splice(0).map(([id, key]) => Sandbox.kill(id, key ? { apiKey: key } : {}).catch(() => false)))
    await Promise.all(this.volumes.splice(0).map(([id, key]) => Volume.destroy(id, key ? { apiKey: key } : {}).catch(() => false)))
    await Promise.all(this.keys.splice(0).map((id) => rest('DELETE', `/api-keys/${id}`).catch(() => null)))
  }
}

/** text reads a web ReadableStream of bytes to a string. */
export async function streamText(stream) {
  return new Response(stream).text()
}
