// Benchmark driven through the official SDK, as a user sees it:
//   - time to interactive: Sandbox.create() until commands.run('true')
//     returns, sequential and N at once;
//   - commands.run('true') on a warm sandbox.
// Prints one JSON object; `warren bench` turns it into ratios.
// Env: E2B_API_KEY, E2B_API_URL, E2B_SANDBOX_URL; BENCH_SEQ, BENCH_PAR,
// BENCH_CMD (counts).
import { Sandbox } from 'e2b'

const seqN = Number(process.env.BENCH_SEQ || 20)
const parN = Number(process.env.BENCH_PAR || 10)
const cmdN = Number(process.env.BENCH_CMD || 100)

async function tti() {
  const start = performance.now()
  const sbx = await Sandbox.create()
  await sbx.commands.run('true')
  const ms = performance.now() - start
  return { ms, sbx }
}

async function main() {
  // One untimed round warms the SDK's connection pools and the page cache.
  const warm = await tti()
  await warm.sbx.kill()

  const seq = []
  for (let i = 0; i < seqN; i++) {
    const { ms, sbx } = await tti()
    seq.push(ms)
    await sbx.kill()
  }

  const par = []
  const runs = await Promise.all(Array.from({ length: parN }, () => tti()))
  for (const { ms, sbx } of runs) {
    par.push(ms)
    await sbx.kill()
  }

  const sbx = await Sandbox.create()
  for (let i = 0; i < 5; i++) await sbx.commands.run('true')
  const cmd = []
  for (let i = 0; i < cmdN; i++) {
    const t = performance.now()
    await sbx.commands.run('true')
    cmd.push(performance.now() - t)
  }
  await sbx.kill()
  console.log(JSON.stringify({ seq, par, cmd }))
}

await main()
