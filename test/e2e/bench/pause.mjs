// Pause/resume and fork benchmark through the official e2b SDK, for
// `warren bench`. For each memory size in BENCH_PAUSE_MB (MiB held by a
// process in the sandbox): pause time, resume time (connect returns) and
// resume to a first command, over BENCH_PAUSE_CYCLES cycles. Then a fork of
// BENCH_FORKS copies of a sandbox holding the first size. The last paused
// sandbox and the forks are left running for the Go side to measure their
// disk; it kills them. Prints one JSON object.
import { Sandbox } from 'e2b'

const sizes = (process.env.BENCH_PAUSE_MB || '100').split(',').map(Number)
const cycles = Number(process.env.BENCH_PAUSE_CYCLES || 5)
const forkN = Number(process.env.BENCH_FORKS || 10)

async function holding(mb) {
  const sbx = await Sandbox.create({ timeoutMs: 600_000 })
  await sbx.commands.run(
    `python3 -c "b = bytearray(b'x') * (${mb} << 20); open('/tmp/ready', 'w').close(); import time; time.sleep(1e6)"`,
    { background: true, timeoutMs: 0 })
  for (let i = 0; i < 600; i++) {
    if (await sbx.files.exists('/tmp/ready')) return sbx
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`no process holding ${mb} MiB after 60 s`)
}

const out = { sizes: [], fork: null, keep: {} }
for (const mb of sizes) {
  const sbx = await holding(mb)
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
    const failed = forks.filter((f) => f instanceof Error)
    if (failed.length) throw new Error(`${failed.length} forks failed: ${failed[0]}`)
    out.fork = { n: forkN, ms: performance.now() - t, ids: forks.map((f) => f.sandboxId) }
    await sbx.pause()
    out.keep = { paused: sbx.sandboxId, mb }
  } else {
    await sbx.kill()
  }
}
console.log(JSON.stringify(out))
