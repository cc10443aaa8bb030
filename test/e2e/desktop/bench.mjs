// Figures for docs/benchmarks.md, "Desktops" (desktop_bench_test.go runs
// it and prints one JSON object): create of a `desktop` sandbox through
// @e2b/desktop to its first screenshot, against a create of `base` to its
// first command in the same run; a screenshot's round trip against
// commands.run('true'); and what an idle desktop costs, from the
// sandbox's own metrics.

import { Sandbox as Desktop } from '@e2b/desktop'
import { Sandbox } from 'e2b'

const CREATES = Number(process.env.E2E_BENCH_CREATES || 10)
const ROUNDS = 20
const IDLE_MS = Number(process.env.E2E_BENCH_IDLE_MS || 60_000)

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

async function timed(fn) {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

async function baseCreates() {
  const ms = []
  for (let i = 0; i < CREATES; i++) {
    let sbx
    ms.push(await timed(async () => {
      sbx = await Sandbox.create('base')
      await sbx.commands.run('true')
    }))
    await sbx.kill()
  }
  return ms
}

async function desktopCreates() {
  const ms = []
  for (let i = 0; i < CREATES; i++) {
    let desk
    ms.push(await timed(async () => {
      desk = await Desktop.create()
      await desk.screenshot()
    }))
    await desk.kill()
  }
  return ms
}

// idle samples the sandbox's metrics while nothing happens in it, after a
// settling pause; each metric is a point of the sandbox's cgroup.
async function idle(desk) {
  await sleep(10_000)
  const from = new Date()
  await sleep(IDLE_MS)
  const samples = (await desk.getMetrics({ start: from, end: new Date() })).filter((m) => m.timestamp >= from)
  if (samples.length === 0) throw new Error('no metrics for the idle window')
  const cpu = samples.map((m) => m.cpuUsedPct)
  const mem = samples.map((m) => m.memUsed)
  return {
    samples: samples.length,
    cpuPct: cpu.reduce((a, b) => a + b, 0) / cpu.length,
    cpuCount: samples[0].cpuCount,
    memMiB: mem.reduce((a, b) => a + b, 0) / mem.length / 2 ** 20,
  }
}

async function roundTrips(desk) {
  const shot = [], run = []
  for (let i = 0; i < ROUNDS; i++) {
    shot.push(await timed(() => desk.screenshot()))
    run.push(await timed(() => desk.commands.run('true')))
  }
  return { shot, run }
}

const mode = process.env.E2E_BENCH_MODE || 'all'
const out = {}
if (mode === 'all' || mode === 'creates') {
  out.baseCreateMs = await baseCreates()
  out.desktopCreateMs = await desktopCreates()
}
if (mode === 'all') {
  const desk = await Desktop.create()
  try {
    Object.assign(out, await roundTrips(desk))
    out.idle = await idle(desk)
    await desk.stream.start()
    out.idleStreaming = await idle(desk)
  } finally {
    await desk.kill()
  }
}
console.log(JSON.stringify(out))
