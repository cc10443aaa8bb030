// Java kernel benchmark through the official @e2b/code-interpreter SDK, in
// one sandbox: BENCH_JAVA_FIRST times createCodeContext({language:
// 'java'}) until its first runCode('1+1') result (a new JVM and JShell
// each time), the same for a python context for comparison, then
// BENCH_JAVA_RUNS runCode('1+1') on a warm java context. Prints one JSON
// object (milliseconds) for BenchmarkJavaKernel.
import { Sandbox } from '@e2b/code-interpreter'

const firstN = Number(process.env.BENCH_JAVA_FIRST || 5)
const runN = Number(process.env.BENCH_JAVA_RUNS || 50)

const sbx = await Sandbox.create({ timeoutMs: 600_000 })
try {
  const firstOf = async (language) => {
    const times = []
    for (let i = 0; i < firstN; i++) {
      const start = performance.now()
      const ctx = await sbx.createCodeContext({ language })
      const ex = await sbx.runCode('1+1', { context: ctx, timeoutMs: 120_000 })
      times.push(performance.now() - start)
      if (ex.text !== '2') throw new Error(`${language}: runCode('1+1') gave ${JSON.stringify(ex.text)} ${JSON.stringify(ex.error)}`)
      await sbx.removeCodeContext(ctx)
    }
    return times
  }
  const javaFirst = await firstOf('java')
  const pythonFirst = await firstOf('python')
  const ctx = await sbx.createCodeContext({ language: 'java' })
  for (let i = 0; i < 5; i++) await sbx.runCode('1+1', { context: ctx })
  const javaRuns = []
  for (let i = 0; i < runN; i++) {
    const t = performance.now()
    const ex = await sbx.runCode('1+1', { context: ctx })
    javaRuns.push(performance.now() - t)
    if (ex.text !== '2') throw new Error(`runCode('1+1') gave ${JSON.stringify(ex.text)}`)
  }
  const mem = await sbx.runCode('Runtime.getRuntime().maxMemory() / (1024 * 1024)', { context: ctx })
  console.log(JSON.stringify({ javaFirst, pythonFirst, javaRuns, javaMaxHeapMiB: Number(mem.text) }))
} finally {
  await sbx.kill()
}
