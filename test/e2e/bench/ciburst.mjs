// BENCH_N code-interpreter sandboxes created at once through the official
// @e2b/code-interpreter SDK, each timed from Sandbox.create() until its
// first runCode('1+1') result; all are killed once every one is timed. A
// failed create is recorded with its error, not retried. Prints one JSON
// object for `warren bench`: {tti: [ms or null], errors: [...]}.
import { Sandbox } from '@e2b/code-interpreter'

const n = Number(process.env.BENCH_N || 20)

async function one() {
  const start = performance.now()
  let sbx
  try {
    sbx = await Sandbox.create()
    const ex = await sbx.runCode('1+1')
    if (ex.text !== '2') throw new Error(`runCode('1+1') gave ${JSON.stringify(ex.text)}`)
    return { ms: performance.now() - start, sbx }
  } catch (e) {
    return { ms: null, error: String(e?.message || e).slice(0, 200), sbx }
  }
}

const runs = await Promise.all(Array.from({ length: n }, one))
await Promise.all(runs.filter((r) => r.sbx).map((r) => r.sbx.kill().catch(() => {})))
console.log(JSON.stringify({ tti: runs.map((r) => r.ms), errors: runs.filter((r) => r.error).map((r) => r.error) }))
