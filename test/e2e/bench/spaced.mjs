// Creates spaced in time, as an agent platform sees them (one every
// BENCH_GAP_MS), through the official SDKs: Sandbox.create() until the
// first commands.run('true') (BENCH_TEMPLATE, default base) or, with
// BENCH_CI=1, until @e2b/code-interpreter's first runCode('1+1') result.
// Each sandbox is killed after. Prints p50/p95 in ms and the times.
// Env: E2B_API_KEY, E2B_API_URL, E2B_SANDBOX_URL; BENCH_N (default 20).
import { Sandbox } from 'e2b'
import { Sandbox as CISandbox } from '@e2b/code-interpreter'

const n = Number(process.env.BENCH_N || 20)
const gap = Number(process.env.BENCH_GAP_MS || 2000)
const ci = process.env.BENCH_CI === '1'
const tpl = process.env.BENCH_TEMPLATE || 'base'

const times = []
for (let i = 0; i < n; i++) {
  const start = performance.now()
  if (ci) {
    const sbx = await CISandbox.create()
    const ex = await sbx.runCode('1+1')
    times.push(performance.now() - start)
    if (ex.text !== '2') throw new Error(`runCode('1+1') gave ${JSON.stringify(ex.text)}`)
    await sbx.kill()
  } else {
    const sbx = await Sandbox.create(tpl)
    await sbx.commands.run('true')
    times.push(performance.now() - start)
    await sbx.kill()
  }
  await new Promise((r) => setTimeout(r, gap))
}
const sorted = [...times].sort((a, b) => a - b)
const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
console.log(JSON.stringify({ n, gapMs: gap, ci, p50: pct(50), p95: pct(95), times: times.map((t) => Math.round(t)) }))
