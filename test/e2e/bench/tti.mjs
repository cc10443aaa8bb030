// Time to interactive through the official SDK, as ComputeSDK's sandbox
// benchmark measures it: the clock runs from Sandbox.create() until the
// first commands.run('echo benchmark') returns; kills are not timed.
// BENCH_MODE picks the run:
//   sequential  BENCH_N sandboxes one after another, each killed before
//               the next;
//   staggered   BENCH_N launched BENCH_STAGGER_MS apart, each timed alone,
//               all killed once the last is timed (they are live at once);
//   burst       BENCH_N launched at once, killed likewise;
//   cmd         commands.run('true') BENCH_N times on one running sandbox.
// A failed iteration is recorded with its error, not retried. Prints one
// JSON object for `warren bench`.
// Env: E2B_API_KEY, E2B_API_URL, E2B_SANDBOX_URL, BENCH_TEMPLATE (base).
import { Sandbox } from 'e2b'

const mode = process.env.BENCH_MODE || 'sequential'
const n = Number(process.env.BENCH_N || 100)
const stagger = Number(process.env.BENCH_STAGGER_MS || 200)
const template = process.env.BENCH_TEMPLATE || 'base'

// one is a single iteration: its TTI in ms, or its error, and the
// sandbox to kill.
async function one() {
  const start = performance.now()
  let sbx
  try {
    sbx = await Sandbox.create(template)
    const r = await sbx.commands.run('echo benchmark')
    if (r.stdout.trim() !== 'benchmark') throw new Error(`stdout ${JSON.stringify(r.stdout)}`)
    const ms = performance.now() - start
    return { ms, end: performance.now(), sbx }
  } catch (e) {
    return { ms: null, error: String(e?.message || e).slice(0, 200), sbx }
  }
}

// killAll kills the runs' sandboxes, ten at a time.
async function killAll(runs) {
  const live = runs.filter((r) => r.sbx)
  for (let i = 0; i < live.length; i += 10) {
    await Promise.all(live.slice(i, i + 10).map((r) => r.sbx.kill().catch(() => {})))
  }
}

async function commands() {
  const sbx = await Sandbox.create(template)
  for (let i = 0; i < 5; i++) await sbx.commands.run('true')
  const tti = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await sbx.commands.run('true')
    tti.push(performance.now() - t)
  }
  await sbx.kill()
  return { tti }
}

async function main() {
  // One untimed round warms the SDK's connection pools and the page cache.
  await killAll([await one()])
  if (mode === 'cmd') return commands()
  const t0 = performance.now()
  let runs
  if (mode === 'sequential') {
    runs = []
    for (let i = 0; i < n; i++) {
      const r = await one()
      await killAll([r])
      runs.push(r)
    }
  } else if (mode === 'staggered') {
    runs = await Promise.all(
      Array.from({ length: n }, (_, i) => new Promise((r) => setTimeout(r, i * stagger)).then(one)),
    )
  } else if (mode === 'burst') {
    runs = await Promise.all(Array.from({ length: n }, () => one()))
  } else {
    throw new Error(`unknown BENCH_MODE ${mode}`)
  }
  const ok = runs.filter((r) => r.ms !== null)
  await killAll(runs)
  return {
    tti: runs.map((r) => r.ms),
    errors: runs.filter((r) => r.error).map((r) => r.error),
    wallMs: Math.max(...ok.map((r) => r.end), t0) - t0,
    firstReadyMs: Math.min(...ok.map((r) => r.end), Infinity) - t0,
  }
}

console.log(JSON.stringify(await main()))
