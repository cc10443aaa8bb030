// The REST API on the wire, for what the JS SDK does not check but other
// clients (the Python SDK above all) depend on: exact status codes, required
// fields and the {"code","message"} error body. Also bad input the SDK cannot
// send, such as malformed JSON.

import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'

import { apiKey, apiUrl, sandboxIdRe, semverRe } from '../lib/env.mjs'

const created = []
after(() => Promise.all(created.map((id) => api('DELETE', `/sandboxes/${id}`))))

async function api(method, path, { body, key = apiKey, raw } = {}) {
  const headers = {}
  if (key) headers['X-API-KEY'] = key
  if (body !== undefined || raw !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(apiUrl + path, {
    method,
    headers,
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  })
  const text = await res.text()
  let json
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

function assertError(res, status, what) {
  assert.equal(res.status, status, `${what}: status ${res.status}, body ${res.text}`)
  assert.ok(res.json, `${what}: error body is JSON: ${res.text}`)
  assert.equal(res.json.code, status, `${what}: body code`)
  assert.equal(typeof res.json.message, 'string', `${what}: body message`)
}

// assertLogEntry checks E2B's SandboxLogEntry: every key present, fields all strings.
function assertLogEntry(e) {
  assert.ok(!Number.isNaN(Date.parse(e.timestamp)), JSON.stringify(e))
  assert.ok(['debug', 'info', 'warn', 'error'].includes(e.level), JSON.stringify(e))
  assert.equal(typeof e.message, 'string', JSON.stringify(e))
  assert.ok(e.fields && Object.values(e.fields).every((v) => typeof v === 'string'), JSON.stringify(e))
}

async function createV1(body = {}) {
  const res = await api('POST', '/sandboxes', { body: { templateID: 'base', timeout: 60, ...body } })
  if (res.json?.sandboxID) created.push(res.json.sandboxID)
  return res
}

function assertSandbox(s) {
  assert.equal(typeof s.templateID, 'string')
  assert.match(s.sandboxID, sandboxIdRe)
  assert.equal(typeof s.clientID, 'string')
  assert.match(s.envdVersion, semverRe)
}

describe('REST API', { timeout: 90_000 }, () => {
  test('auth: missing and wrong keys get 401 with an error body', async () => {
    assertError(await api('GET', '/v2/sandboxes', { key: null }), 401, 'no key')
    assertError(await api('GET', '/v2/sandboxes', { key: 'e2b_' + 'f'.repeat(40) }), 401, 'wrong key')
    assertError(await api('POST', '/v2/sandboxes', { key: 'not-a-key', body: { templateID: 'base' } }), 401, 'malformed key')
  })

  test('unknown sandbox: 404 with code in the body on every endpoint', async () => {
    const id = 'nosuchsandbox0rest000'
    assertError(await api('GET', `/sandboxes/${id}`), 404, 'GET')
    assertError(await api('DELETE', `/sandboxes/${id}`), 404, 'DELETE')
    assertError(await api('POST', `/sandboxes/${id}/timeout`, { body: { timeout: 30 } }), 404, 'timeout')
    assertError(await api('POST', `/sandboxes/${id}/connect`, { body: { timeout: 30 } }), 404, 'v1 connect')
    assertError(await api('POST', `/v2/sandboxes/${id}/connect`, { body: {} }), 404, 'v2 connect')
    assertError(await api('GET', `/sandboxes/${id}/metrics`), 404, 'metrics')
    assertError(await api('GET', `/sandboxes/${id}/logs`), 404, 'v1 logs')
    assertError(await api('GET', `/v2/sandboxes/${id}/logs`), 404, 'v2 logs')
  })

  test('bad create requests get 400 or 404', async () => {
    assertError(await api('POST', '/v2/sandboxes', { raw: '{"templateID": "base",' }), 400, 'malformed JSON')
    assertError(await api('POST', '/sandboxes', { raw: 'not json' }), 400, 'v1 malformed JSON')
    assertError(await api('POST', '/v2/sandboxes', { body: { templateID: 'base', timeout: -1 } }), 400, 'negative timeout')
    assertError(await api('POST', '/v2/sandboxes', { body: { templateID: 'base', timeout: 'soon' } }), 400, 'string timeout')
    const unknown = await api('POST', '/v2/sandboxes', { body: { templateID: 'no-such-template-rest' } })
    assertError(unknown, 404, 'unknown template')
    assert.match(unknown.json.message, /no-such-template-rest/)
  })

  test('v1 create: 201 Sandbox, detail, timeout, refresh, metrics, delete 204', async () => {
    const res = await createV1({ secure: true, metadata: { via: 'rest' }, envVars: { A: '1' } })
    assert.equal(res.status, 201, res.text)
    assertSandbox(res.json)
    assert.ok(res.json.envdAccessToken, 'secure:true returns an envdAccessToken')
    const id = res.json.sandboxID

    const detail = await api('GET', `/sandboxes/${id}`)
    assert.equal(detail.status, 200, detail.text)
    assertSandbox(detail.json)
    for (const key of ['startedAt', 'endAt']) {
      assert.ok(!Number.isNaN(Date.parse(detail.json[key])), `${key}=${detail.json[key]}`)
    }
    for (const key of ['cpuCount', 'memoryMB', 'diskSizeMB']) {
      assert.ok(Number.isInteger(detail.json[key]) && detail.json[key] > 0, `${key}=${detail.json[key]}`)
    }
    assert.equal(detail.json.state, 'running')
    assert.deepEqual(detail.json.metadata, { via: 'rest' })

    const timeout = await api('POST', `/sandboxes/${id}/timeout`, { body: { timeout: 120 } })
    assert.equal(timeout.status, 204, timeout.text)
    const refresh = await api('POST', `/sandboxes/${id}/refreshes`, { body: { duration: 60 } })
    assert.equal(refresh.status, 204, refresh.text)

    const connect = await api('POST', `/sandboxes/${id}/connect`, { body: { timeout: 60 } })
    assert.equal(connect.status, 200, connect.text)
    assertSandbox(connect.json)

    const metrics = await api('GET', `/sandboxes/${id}/metrics`)
    assert.equal(metrics.status, 200, metrics.text)
    assert.ok(Array.isArray(metrics.json))
    for (const m of metrics.json) {
      for (const key of ['timestamp', 'timestampUnix', 'cpuCount', 'cpuUsedPct', 'memUsed', 'memTotal', 'memCache', 'diskUsed', 'diskTotal']) {
        assert.ok(key in m, `metric has ${key}: ${JSON.stringify(m)}`)
      }
    }

    const del = await api('DELETE', `/sandboxes/${id}`)
    assert.equal(del.status, 204, del.text)
    assertError(await api('DELETE', `/sandboxes/${id}`), 404, 'second DELETE')
  })

  test('v2 create returns a token and v2 connect 200', async () => {
    const res = await api('POST', '/v2/sandboxes', { body: { templateID: 'base', timeout: 60 } })
    assert.equal(res.status, 201, res.text)
    created.push(res.json.sandboxID)
    assertSandbox(res.json)
    assert.ok(res.json.envdAccessToken, 'v2 sandboxes are always secured')

    const connect = await api('POST', `/v2/sandboxes/${res.json.sandboxID}/connect`, { body: {} })
    assert.equal(connect.status, 200, connect.text)
    assert.equal(connect.json.sandboxID, res.json.sandboxID)
  })

  test('list: JSON array with the required fields, and the deprecated list', async () => {
    const res = await createV1({ metadata: { list: 'rest' } })
    assert.equal(res.status, 201, res.text)

    const list = await api('GET', '/v2/sandboxes?limit=100')
    assert.equal(list.status, 200, list.text)
    assert.ok(Array.isArray(list.json))
    const mine = list.json.find((s) => s.sandboxID === res.json.sandboxID)
    assert.ok(mine, 'the new sandbox is listed')
    for (const key of ['templateID', 'sandboxID', 'clientID', 'startedAt', 'endAt', 'cpuCount', 'memoryMB', 'diskSizeMB', 'state', 'envdVersion']) {
      assert.ok(key in mine, `listed sandbox has ${key}`)
    }
    assert.ok(list.headers.get('x-total-running') !== null, 'X-Total-Running header')

    const old = await api('GET', '/sandboxes')
    assert.equal(old.status, 200, old.text)
    assert.ok(old.json.some((s) => s.sandboxID === res.json.sandboxID))

    assertError(await api('GET', '/v2/sandboxes?state=sleeping'), 400, 'unknown state')
  })

  test('logs: envd\'s lines in both shapes, by cursor, direction, level and search; paused and killed too', async () => {
    const res = await createV1()
    assert.equal(res.status, 201, res.text)
    const id = res.json.sandboxID
    const logs = async (query = '') => {
      const r = await api('GET', `/v2/sandboxes/${id}/logs${query}`)
      assert.equal(r.status, 200, r.text)
      r.json.logs.forEach(assertLogEntry)
      return r.json.logs
    }
    const all = await logs()
    const listening = all.find((e) => e.message === 'envd listening')
    assert.ok(listening, JSON.stringify(all))
    assert.equal(listening.fields.component, 'envd')
    assert.ok(all.some((e) => e.message === 'initialized'), 'the create\'s /init is logged')

    const v1 = await api('GET', `/sandboxes/${id}/logs?limit=1`)
    assert.equal(v1.status, 200, v1.text)
    assert.equal(v1.json.logs.length, 1)
    assert.ok(!Number.isNaN(Date.parse(v1.json.logs[0].timestamp)))
    assert.match(v1.json.logs[0].line, /envd listening/)
    v1.json.logEntries.forEach(assertLogEntry)
    assert.equal(v1.json.logEntries[0].message, 'envd listening')

    const newest = await logs('?direction=backward&limit=2')
    assert.equal(newest.length, 2)
    assert.ok(Date.parse(newest[0].timestamp) >= Date.parse(newest[1].timestamp), 'backward is newest first')
    const cursor = Date.parse(all[1].timestamp)
    assert.ok((await logs(`?cursor=${cursor}`)).every((e) => Date.parse(e.timestamp) >= cursor))
    assert.deepEqual(await logs(`?cursor=${Date.now() + 3_600_000}`), [])
    assert.deepEqual((await logs('?search=listening')).map((e) => e.message), ['envd listening'])
    assert.ok((await logs('?level=warn')).every((e) => e.level === 'warn' || e.level === 'error'))

    assert.equal((await api('POST', `/sandboxes/${id}/pause`, { body: {} })).status, 204)
    assert.ok((await logs()).some((e) => e.message === 'envd listening'), 'a paused sandbox has its logs')
    assert.equal((await api('DELETE', `/sandboxes/${id}`)).status, 204)
    assert.ok((await logs()).some((e) => e.message === 'envd listening'), 'a killed sandbox keeps its last lines')

    for (const q of ['limit=1001', 'limit=-1', 'direction=up', 'level=fatal', 'cursor=soon']) {
      assertError(await api('GET', `/v2/sandboxes/${id}/logs?${q}`), 400, q)
    }
    assertError(await api('GET', `/sandboxes/${id}/logs?start=-1`), 400, 'v1 negative start')
  })

  test('metrics: start/end are whole unix seconds; bad ones get 400', async () => {
    const res = await createV1()
    assert.equal(res.status, 201, res.text)
    const id = res.json.sandboxID
    const now = Math.floor(Date.now() / 1000)
    const old = await api('GET', `/sandboxes/${id}/metrics?start=${now - 7200}&end=${now - 3600}`)
    assert.equal(old.status, 200, old.text)
    assert.deepEqual(old.json, [], 'an hour-old window')
    const around = await api('GET', `/sandboxes/${id}/metrics?start=${now - 60}&end=${now + 60}`)
    assert.equal(around.status, 200, around.text)
    assert.ok(around.json.length >= 1, `a window around now: ${around.text}`)
    for (const m of around.json) assert.ok(m.timestampUnix >= now - 60 && m.timestampUnix <= now + 60, JSON.stringify(m))
    assertError(await api('GET', `/sandboxes/${id}/metrics?start=${now}&end=${now - 10}`), 400, 'start after end')
    assertError(await api('GET', `/sandboxes/${id}/metrics?start=yesterday`), 400, 'start not a number')
    const batch = await api('GET', `/sandboxes/metrics?sandbox_ids=${id},nosuchsandbox0rest000`)
    assert.equal(batch.status, 200, batch.text)
    assert.deepEqual(Object.keys(batch.json.sandboxes), [id], batch.text)
  })

  test('removed v1 template-build endpoints answer 410 with an error body', async () => {
    for (const path of ['/templates', '/templates/sometemplate', '/templates/sometemplate/builds/somebuild', '/v2/templates']) {
      const res = await api('POST', path, { body: { alias: 'x', dockerfile: 'FROM debian' } })
      assertError(res, 410, `POST ${path}`)
      assert.match(res.json.message, /\/v3\/templates/, res.text)
    }
  })

  test('GET /health answers 200 on the API', async () => {
    const res = await fetch(apiUrl + '/health')
    assert.equal(res.status, 200)
  })
})
