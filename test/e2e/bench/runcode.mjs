// Code interpreter benchmark through the official @e2b/code-interpreter SDK:
//   - Sandbox.create() until the first runCode('1+1') result, sequential;
//   - runCode('1+1') on a warm context.
// Prints one JSON object for `warren bench`.
import { Sandbox } from '@e2b/code-interpreter'

const firstN = Number(process.env.BENCH_CI_FIRST || 5)
const runN = Number(process.env.BENCH_CI_RUNS || 100)

const first = []
for (let i = 0; i < firstN; i++) {
  const start = performance.now()
  const sbx = await Sandbox.create()
  await sbx.runCode('1+1')
  first.push(performance.now() - start)
  await sbx.kill()
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
