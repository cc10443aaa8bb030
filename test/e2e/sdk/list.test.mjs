// Sandbox.list: metadata and state filters, pagination.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'

import { Sandbox, Sandboxes, semverRe, uniqueTag } from '../lib/env.mjs'

const pool = new Sandboxes()
after(() => pool.killAll())

async function listAll(opts) {
  const items = []
  const paginator = Sandbox.list(opts)
  while (paginator.hasNext) items.push(...(await paginator.nextItems()))
  return items
}

describe('Sandbox.list', { timeout: 180_000 }, () => {
  const tag = uniqueTag('list')
  // A key and a value with spaces, '&' and '=' exercise the SDK's double encoding.
  const tricky = { 'user id': 'a b&c=d' }
  let first
  let second

  before(async () => {
    first = await pool.create({ metadata: { run: tag, ...tricky, n: '1' }, timeoutMs: 120_000 })
    second = await pool.create({ metadata: { run: tag, n: '2' }, timeoutMs: 120_000 })
  })

  test('lists running sandboxes with their fields', async () => {
    const items = await listAll({ query: { metadata: { run: tag } } })
    const ids = items.map((s) => s.sandboxId).sort()
    assert.deepEqual(ids, [first.sandboxId, second.sandboxId].sort())

    const s = items.find((i) => i.sandboxId === first.sandboxId)
    assert.deepEqual(s.metadata, { run: tag, ...tricky, n: '1' })
    assert.equal(s.state, 'running')
    assert.ok(s.templateId)
    assert.ok(s.startedAt instanceof Date && s.endAt > s.startedAt)
    assert.ok(s.cpuCount > 0 && s.memoryMB > 0)
    assert.match(s.envdVersion, semverRe)
  })

  test('filters by metadata with spaces and &', async () => {
    const items = await listAll({ query: { metadata: { run: tag, ...tricky } } })
    assert.deepEqual(items.map((s) => s.sandboxId), [first.sandboxId])

    const none = await listAll({ query: { metadata: { run: tag, 'user id': 'a b' } } })
    assert.deepEqual(none, [], 'a prefix of the value must not match')

    const byValueOnly = await listAll({ query: { metadata: { run: tag, n: '2' } } })
    assert.deepEqual(byValueOnly.map((s) => s.sandboxId), [second.sandboxId])
  })

  test('filters by state', async () => {
    const running = await listAll({ query: { metadata: { run: tag }, state: ['running'] } })
    assert.equal(running.length, 2)

    const paused = await listAll({ query: { metadata: { run: tag }, state: ['paused'] } })
    assert.deepEqual(paused, [])

    const both = await listAll({ query: { metadata: { run: tag }, state: ['running', 'paused'] } })
    assert.equal(both.length, 2)
  })

  test('paginates with limit 1', async () => {
    const paginator = Sandbox.list({ query: { metadata: { run: tag } }, limit: 1 })
    assert.equal(paginator.hasNext, true)

    const page1 = await paginator.nextItems()
    assert.equal(page1.length, 1)
    assert.equal(paginator.hasNext, true, 'a next page exists after the first of two')
    assert.ok(paginator.nextToken, 'x-next-token is set')

    const page2 = await paginator.nextItems()
    assert.equal(page2.length, 1)
    assert.notEqual(page2[0].sandboxId, page1[0].sandboxId)
    assert.equal(paginator.hasNext, false, 'no next page after the last one')

    // Default order is newest first.
    assert.equal(page1[0].sandboxId, second.sandboxId)
    assert.equal(page2[0].sandboxId, first.sandboxId)
  })

  test('order asc returns oldest first', async () => {
    const items = await listAll({ query: { metadata: { run: tag } }, order: 'asc' })
    assert.deepEqual(items.map((s) => s.sandboxId), [first.sandboxId, second.sandboxId])
  })

  test('a killed sandbox disappears from the list', async () => {
    const gone = await pool.create({ metadata: { run: `${tag}-gone` }, timeoutMs: 60_000 })
    assert.equal((await listAll({ query: { metadata: { run: `${tag}-gone` } } })).length, 1)
    await gone.kill()
    assert.deepEqual(await listAll({ query: { metadata: { run: `${tag}-gone` } } }), [])
  })
})
