// Pause/resume and fork benchmark through the official e2b SDK, for
// `warren bench`. For each memory size in BENCH_PAUSE_MB (MiB held by a
// process in the sandbox): pause time, resume time (connect returns) and
// resume to a first command, over BENCH_PAUSE_CYCLES cycles. Then a fork of
// BENCH_FORKS copies of a sandbox holding the first size. The last paused
// sandbox and the forks are left running for the Go side to measure their
// disk; it kills them. Prints one JSON object.
import { holding, killAll } from './holding.mjs'

const sizes = (process.env.BENCH_PAUSE_MB || '100').split(',').map(Number)
const cycles = Number(process.env.BENCH_PAUSE_CYCLES || 5)
const forkN = Number(process.env.BENCH_FORKS || 10)

const out = { sizes: [], fork: null, keep: {} }
let current = null // the sandbox being measured
try {
  await measure()
} catch (e) {
  // The Go side cleans up only after a run that printed its result.
  await killAll([current?.sandboxId, out.keep.paused, ...(out.fork?.ids ?? [])])
  throw e
}
console.log(JSON.stringify(out))

async function measure() {
  for (const mb of sizes) {
    const sbx = (current = await holding(mb))
    const row = { mb, pause: [], resume: [], resumeCmd: [] }
    for (let i = 0; i < cycles; i++) {
      let t = performance.now()
      await sbx.pause()
      row.pause.push(performance.now() - t)
      t = performance.now()
      await sbx.connect()
      row.resume.push(performance.now() - t)
      await sbx.commands.run('true')
      row.resumeCmd.push(performance.now() - t)
    }
    out.sizes.push(row)
    if (mb === sizes[0]) {
      const t = performance.now()
      const forks = await sbx.fork({ count: forkN, timeoutMs: 600_000 })
      const made = forks.filter((f) => !(f instanceof Error))
      out.fork = { n: forkN, ms: performance.now() - t, ids: made.map((f) => f.sandboxId) }
      if (made.length < forks.length) throw new Error(`${forks.length - made.length} forks failed: ${forks.find((f) => f instanceof Error)}`)
      await sbx.pause()
      out.keep = { paused: sbx.sandboxId, mb }
    } else {
      await sbx.kill()
    }
    current = null
  }
}
