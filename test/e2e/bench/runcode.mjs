// Code interpreter benchmark through the official @e2b/code-interpreter SDK:
//   - Sandbox.create() until the first runCode('1+1') result, one create
//     every BENCH_CI_GAP_MS (default 2000: an agent opening sessions, not
//     a loop), each sandbox killed before the gap;
//   - runCode('1+1') on a warm context.
// Prints one JSON object for `warren bench`.
import { Sandbox } from '@e2b/code-interpreter'

const firstN = Number(process.env.BENCH_CI_FIRST || 10)
const runN = Number(process.env.BENCH_CI_RUNS || 100)
const gap = Number(process.env.BENCH_CI_GAP_MS || 2000)

const first = []
for (let i = 0; i < firstN; i++) {
  const start = performance.now()
  const sbx = await Sandbox.create()
  const ex = await sbx.runCode('1+1')
  first.push(performance.now() - start)
  if (ex.text !== '2') throw new Error(`runCode('1+1') gave ${JSON.stringify(ex.text)}`)
  await sbx.kill()
  await new Promise((r) => setTimeout(r, gap))
}

const sbx = await Sandbox.create()
for (let i = 0; i < 5; i++) await sbx.runCode('1+1')
const runs = []
for (let i = 0; i < runN; i++) {
  const t = performance.now()
  const ex = await sbx.runCode('1+1')
  runs.push(performance.now() - t)
  if (ex.text !== '2') throw new Error(`runCode('1+1') gave ${JSON.stringify(ex.text)}`)
}
await sbx.kill()
console.log(JSON.stringify({ first, runs }))
