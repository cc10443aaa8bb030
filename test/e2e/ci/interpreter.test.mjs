// The code interpreter through the official @e2b/code-interpreter SDK:
// stateful Python, JavaScript and Java, streaming logs, rich results, errors,
// contexts, timeouts and a kernel that dies.

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'

import { Sandbox } from '@e2b/code-interpreter'

// Every context is a kernel of its own (Deno's take about 200 MB): tests
// remove the contexts they make, so that the file's one sandbox stays well
// inside its memory rather than leaning on the OOM guard.
let sbx
before(async () => {
  sbx = await Sandbox.create({ timeoutMs: 300_000 })
})
after(async () => {
  await sbx?.kill().catch(() => {})
})

describe('runCode (python)', { timeout: 180_000 }, () => {
  test('state persists across calls and the last expression is the text', async () => {
    const ex = await sbx.runCode('x = 1; x += 1; x')
    assert.equal(ex.error, undefined)
    assert.equal(ex.text, '2')
    assert.equal((await sbx.runCode('x * 10')).text, '20')
  })

  test('stdout and stderr stream to callbacks and logs', async () => {
    const out = []
    const err = []
    const ex = await sbx.runCode('import sys, time\nprint("a")\ntime.sleep(0.2)\nprint("b", file=sys.stderr)', {
      onStdout: (m) => out.push(m.line),
      onStderr: (m) => err.push(m.line),
    })
    assert.deepEqual(ex.logs.stdout, ['a\n'])
    assert.deepEqual(ex.logs.stderr, ['b\n'])
    assert.deepEqual(out, ['a\n'])
    assert.deepEqual(err, ['b\n'])
  })

  test('an exception is execution.error with name, value and traceback', async () => {
    const ex = await sbx.runCode('1/0')
    assert.equal(ex.error.name, 'ZeroDivisionError')
    assert.match(ex.error.value, /division by zero/)
    assert.match(ex.error.traceback, /ZeroDivisionError/)
  })

  test('a syntax error is an error too', async () => {
    const ex = await sbx.runCode('def (:')
    assert.equal(ex.error.name, 'SyntaxError')
  })

  test('matplotlib figure gives png and chart; DataFrame gives html', async () => {
    const ex = await sbx.runCode(
      'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [4, 5, 6])\nplt.title("t")\nplt.show()',
    )
    const fig = ex.results.find((r) => r.png)
    assert.ok(fig, `a png result: ${JSON.stringify(ex.results.map((r) => r.formats()))}`)
    assert.equal(fig.chart?.type, 'line')
    assert.equal(fig.chart?.title, 't')
    const df = await sbx.runCode('import pandas as pd\npd.DataFrame({"a": [1, 2]})')
    assert.match(df.results[0].html, /<table/)
    assert.ok(df.results[0].text)
  })

  test('bar, scatter, pie and box plots give their chart elements', async () => {
    const chartOf = async (code) => {
      const ex = await sbx.runCode(`import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n${code}\nplt.show()`)
      assert.equal(ex.error, undefined)
      const r = ex.results.find((x) => x.chart)
      assert.ok(r, `a chart result for ${code}`)
      return r.chart
    }
    const bar = await chartOf('ax.bar(["a", "b"], [3, 5], label="n")\nax.set_title("Bars")')
    assert.equal(bar.type, 'bar')
    assert.equal(bar.title, 'Bars')
    assert.deepEqual(bar.elements.map((e) => [e.label, e.value]), [['a', 3], ['b', 5]])
    const scatter = await chartOf('ax.scatter([1, 2, 3], [4, 5, 6], label="pts")')
    assert.equal(scatter.type, 'scatter')
    assert.deepEqual(scatter.elements[0].points, [[1, 4], [2, 5], [3, 6]])
    const pie = await chartOf('ax.pie([1, 3], labels=["x", "y"])')
    assert.equal(pie.type, 'pie')
    assert.deepEqual(pie.elements.map((e) => [e.label, e.angle]), [['x', 90], ['y', 270]])
    const box = await chartOf('ax.boxplot([[1, 2, 3, 4, 5, 40]], labels=["s"])')
    assert.equal(box.type, 'box_and_whisker')
    assert.deepEqual([box.elements[0].median, box.elements[0].outliers], [3.5, [40]])
  })

  test('chart numbers are rounded as upstream: no float noise in any chart type', async () => {
    const chartOf = async (code) => {
      const ex = await sbx.runCode(`import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n${code}\nplt.show()`)
      return ex.results.find((x) => x.chart)?.chart
    }
    const pie = await chartOf('ax.pie([1, 2, 3, 4])')
    assert.deepEqual(pie.elements.map((e) => e.angle), [36, 72, 108, 144])
    const line = await chartOf('ax.plot([0.1, 0.2, 0.3], [0.1 + 0.2, 1 / 3, 2 / 3])')
    assert.deepEqual(line.elements[0].points, [[0.1, 0.3], [0.2, 0.33333333], [0.3, 0.66666667]])
    const bar = await chartOf('ax.bar(["a"], [0.1 + 0.2])')
    assert.deepEqual(bar.elements.map((e) => e.value), [0.3])
    const scatter = await chartOf('ax.scatter([1 / 3], [0.1 * 3])')
    assert.deepEqual(scatter.elements[0].points, [[0.33333333, 0.3]])
    const box = await chartOf('ax.boxplot([[0.1, 0.2, 0.3, 0.7, 1.1, 9.9]])')
    const b = box.elements[0]
    assert.deepEqual([b.min, b.first_quartile, b.median, b.third_quartile, b.max, b.outliers], [0.1, 0.225, 0.5, 1, 1.1, [9.9]])
  })

  test('a PIL image that is saved is displayed too; a list result is JSON', async () => {
    const ex = await sbx.runCode('from PIL import Image\nImage.new("RGB", (4, 4), "red").save("/tmp/red.png")')
    assert.equal(ex.error, undefined)
    assert.equal(ex.results.length, 1)
    assert.ok(ex.results[0].png, `a png: ${JSON.stringify(ex.results.map((r) => r.formats()))}`)
    const saved = await sbx.runCode('from PIL import Image\nImage.open("/tmp/red.png").size')
    assert.equal(saved.text, '(4, 4)')
    const js = await sbx.runCode('import numpy as np\n[1, 2.5, {"a": None, 3: np.int64(4)}, np.arange(2)]')
    assert.deepEqual(js.results[0].json, [1, 2.5, { a: null, 3: 4 }, [0, 1]])
    assert.equal(js.text, "[1, 2.5, {'a': None, 3: 4}, array([0, 1])]")
  })

  test('display() of several objects gives several results', async () => {
    const ex = await sbx.runCode('from IPython.display import display, Markdown, JSON\ndisplay(Markdown("**m**"))\ndisplay(JSON({"k": 1}))')
    assert.equal(ex.results.length, 2)
    assert.equal(ex.results[0].markdown, '**m**')
    assert.deepEqual(ex.results[1].json, { k: 1 })
  })

  test('a run past timeoutMs is interrupted and the context keeps its state', async () => {
    await sbx.runCode('kept = 42')
    await assert.rejects(sbx.runCode('import time; time.sleep(60)', { timeoutMs: 2_000 }))
    assert.equal((await sbx.runCode('kept')).text, '42')
  })

  test('a kernel that dies is restarted and says state was lost', async () => {
    const ctx = await sbx.createCodeContext({ language: 'python' })
    await sbx.runCode('y = 1', { context: ctx })
    const died = await sbx.runCode('import os; os._exit(1)', { context: ctx })
    assert.ok(died.error, 'the execution during which the kernel died reports an error')
    const after = await sbx.runCode('y', { context: ctx })
    assert.equal(after.error?.name, 'NameError', 'state was lost with the kernel')
    await sbx.removeCodeContext(ctx)
  })
})

describe('contexts', { timeout: 120_000 }, () => {
  test('contexts do not share state; list, restart and remove', async () => {
    const a = await sbx.createCodeContext({ language: 'python', cwd: '/tmp' })
    const b = await sbx.createCodeContext({ language: 'python' })
    assert.equal(a.cwd, '/tmp')
    await sbx.runCode('v = "a"', { context: a })
    assert.equal((await sbx.runCode('v', { context: a })).text, 'a', 'one pair of quotes is stripped')
    assert.equal((await sbx.runCode('v', { context: b })).error?.name, 'NameError')
    assert.equal((await sbx.runCode('import os; os.getcwd()', { context: a })).text, '/tmp')
    const ids = (await sbx.listCodeContexts()).map((c) => c.id)
    assert.ok(ids.includes(a.id) && ids.includes(b.id))
    await sbx.restartCodeContext(a)
    assert.equal((await sbx.runCode('v', { context: a })).error?.name, 'NameError')
    await sbx.removeCodeContext(b)
    assert.ok(!(await sbx.listCodeContexts()).map((c) => c.id).includes(b.id))
    await sbx.removeCodeContext(a)
  })

  test('an unknown context is a NotFound error', async () => {
    await assert.rejects(sbx.runCode('1', { context: { id: 'nope', language: 'python', cwd: '/' } }))
  })
})

describe('as the upstream interpreter', { timeout: 120_000 }, () => {
  let fresh
  before(async () => {
    fresh = await Sandbox.create({ timeoutMs: 120_000 })
  })
  after(async () => {
    await fresh?.kill().catch(() => {})
  })

  test('a python and a javascript context exist from the start, in that order', async () => {
    const list = await fresh.listCodeContexts()
    assert.deepEqual(list.map((c) => [c.language, c.cwd]), [['python', '/home/user'], ['javascript', '/home/user']])
    const mine = await fresh.createCodeContext({ language: 'python' })
    // The default javascript context is the one runCode(language js) uses.
    await fresh.runCode('globalThis.seen = 41', { language: 'js' })
    assert.equal((await fresh.runCode('seen + 1', { context: list[1] })).text, '42')
    assert.deepEqual((await fresh.listCodeContexts()).map((c) => c.id), [list[0].id, list[1].id, mine.id])
  })

  test('kernels run as root; a context in /root works; commands stay user', async () => {
    const py = await fresh.runCode('import os; (os.getuid(), os.environ["HOME"])')
    assert.equal(py.error, undefined)
    assert.equal(py.text, "(0, '/root')")
    const ctx = await fresh.createCodeContext({ cwd: '/root' })
    const ex = await fresh.runCode('import os; open("made-by-kernel", "w").write("x"); os.getcwd()', { context: ctx })
    assert.equal(ex.error, undefined)
    assert.equal(ex.text, '/root')
    const sh = await fresh.runCode('id -un', { language: 'bash' })
    assert.deepEqual(sh.logs.stdout, ['root\n'])
    const cmd = await fresh.commands.run('whoami; sudo stat -c %U /root/made-by-kernel')
    assert.equal(cmd.stdout, 'user\nroot\n')
  })
})

describe('runCode (javascript)', { timeout: 120_000 }, () => {
  test('state persists between calls', async () => {
    const ctx = await sbx.createCodeContext({ language: 'js' })
    await sbx.runCode('let n = 2', { context: ctx })
    assert.equal((await sbx.runCode('n * 21', { context: ctx })).text, '42')
    await sbx.removeCodeContext(ctx)
  })

  test('a busy loop past timeoutMs is interrupted and the context keeps its state', async () => {
    const ctx = await sbx.createCodeContext({ language: 'js' })
    await sbx.runCode('let kept = 7', { context: ctx })
    await assert.rejects(sbx.runCode('while (true) {}', { context: ctx, timeoutMs: 2_000 }))
    assert.equal((await sbx.runCode('kept * 6', { context: ctx })).text, '42')
    await sbx.removeCodeContext(ctx)
  })
})

describe('more languages and options', { timeout: 300_000 }, () => {
  test('typescript runs on the same kernel family', async () => {
    const ex = await sbx.runCode('const a: number = 40; a + 2', { language: 'ts' })
    assert.equal(ex.error, undefined)
    assert.equal(ex.text, '42')
  })

  test('r keeps its state; an R error is an error; envs reach it', async () => {
    const ctx = await sbx.createCodeContext({ language: 'r' })
    await sbx.runCode('x <- c(1, 2, 3)', { context: ctx })
    // IRkernel shows values as display data, so they are results, but
    // not the main one (no execution.text), as upstream.
    const ex = await sbx.runCode('sum(x) * 2', { context: ctx })
    assert.equal(ex.error, undefined)
    assert.deepEqual(ex.results.map((r) => r.text), ['[1] 12'])
    const printed = await sbx.runCode('cat("from r\\n")', { language: 'r' })
    assert.deepEqual(printed.logs.stdout, ['from r\n'])
    const failed = await sbx.runCode('stop("boom")', { context: ctx })
    assert.match(failed.error?.value ?? '', /boom/)
    const env = await sbx.runCode('Sys.getenv("WARREN_R")', { context: ctx, envs: { WARREN_R: 'yes' } })
    assert.deepEqual(env.results.map((r) => r.text), ['[1] "yes"'])
    // One variable per execution is restored afterwards (R's Sys.getenv
    // drops names for a single variable unless asked for them).
    const unset = await sbx.runCode('Sys.getenv("WARREN_R", unset = "gone")', { context: ctx })
    assert.deepEqual(unset.results.map((r) => r.text), ['[1] "gone"'])
    await sbx.runCode('Sys.setenv(WARREN_R2 = "kept")', { context: ctx })
    await sbx.runCode('invisible(0)', { context: ctx, envs: { WARREN_R2: 'over' } })
    const kept = await sbx.runCode('Sys.getenv("WARREN_R2")', { context: ctx })
    assert.deepEqual(kept.results.map((r) => r.text), ['[1] "kept"'])
    await sbx.removeCodeContext(ctx)
  })

  test('bash keeps its session; a failing command is an error', async () => {
    const ctx = await sbx.createCodeContext({ language: 'bash', cwd: '/tmp' })
    await sbx.runCode('greeting=hello', { context: ctx })
    const ex = await sbx.runCode('echo "$greeting from $(pwd)"', { context: ctx })
    assert.deepEqual(ex.logs.stdout, ['hello from /tmp\n'])
    const failed = await sbx.runCode('false', { context: ctx })
    assert.match(failed.error?.value ?? '', /exit status 1/)
    // Code may change the prompts the kernel waits for; the session goes on.
    await sbx.runCode("PS1='> '; PS2='+ '", { context: ctx, timeoutMs: 10_000 })
    const still = await sbx.runCode('echo "$greeting again"', { context: ctx, timeoutMs: 10_000 })
    assert.deepEqual(still.logs.stdout, ['hello again\n'])
    await sbx.removeCodeContext(ctx)
  })

  test('bash output streams while the command runs', async () => {
    const seen = []
    const start = Date.now()
    await sbx.runCode('echo first; sleep 2; echo second', {
      language: 'bash',
      onStdout: (m) => seen.push([m.line, Date.now() - start]),
    })
    assert.deepEqual(seen.map(([l]) => l), ['first\n', 'second\n'])
    assert.ok(seen[1][1] - seen[0][1] > 1_000, `first arrived at ${seen[0][1]} ms, second at ${seen[1][1]} ms`)
  })

  test('envs apply to one execution only', async () => {
    const withEnv = await sbx.runCode('import os; os.environ.get("WARREN_E2E")', { envs: { WARREN_E2E: 'yes' } })
    assert.equal(withEnv.text, 'yes')
    const without = await sbx.runCode('import os; repr(os.environ.get("WARREN_E2E"))')
    assert.equal(without.text, 'None')
  })

  test('an unknown language is an error', async () => {
    await assert.rejects(sbx.runCode('1', { language: 'cobol' }))
  })

  test('concurrent runCode calls on one context queue, never interleave', async () => {
    // Concurrent requests reach the server in no fixed order; what must
    // hold is that each runs whole before the next starts.
    const ctx = await sbx.createCodeContext({ language: 'python' })
    await sbx.runCode('order = []', { context: ctx })
    await Promise.all([1, 2, 3, 4].map((i) =>
      sbx.runCode(`import time\norder.append(${i})\ntime.sleep(0.05)\norder.append(-${i})`, { context: ctx })))
    const order = JSON.parse((await sbx.runCode('import json; json.dumps(order)', { context: ctx })).text)
    assert.equal(order.length, 8)
    for (let k = 0; k < 8; k += 2) assert.equal(order[k + 1], -order[k], `run ${order[k]} interleaved: ${order}`)
    await sbx.removeCodeContext(ctx)
  })

  test('a large output arrives or is truncated with a marker, and the context survives', async () => {
    const ex = await sbx.runCode('print("x" * (8 * 1024 * 1024))')
    const total = ex.logs.stdout.join('').length + ex.logs.stderr.join('').length
    assert.ok(total > 1024 * 1024, `got ${total} bytes of output`)
    assert.equal((await sbx.runCode('1 + 1')).text, '2')
  })

  test('48 MB printed at once (one kernel message) is dropped with a marker; the context survives', async () => {
    // ipykernel sends one print as one message, whatever its size; warren
    // keeps at most 32 MiB of one. A sandbox of its own: the shared one
    // holds this file's other kernels, and the print needs a few copies
    // of 48 MB inside the kernel.
    const own = await Sandbox.create({ timeoutMs: 120_000 })
    try {
      const ex = await own.runCode('big = "x" * (48 * 1024 * 1024); print(big); del big')
      assert.equal(ex.error, undefined)
      assert.match(ex.logs.stderr.join(''), /\[output dropped: the kernel sent 48\.0 MiB in one stream message/)
      assert.equal((await own.runCode('1 + 1')).text, '2')
    } finally {
      await own.kill()
    }
  })

  test('binary garbage on stdout arrives as text', async () => {
    const ex = await sbx.runCode('import os\nos.write(1, bytes(range(256)))\nprint(bytes(range(256)).decode("latin-1"))\nprint("\\udcff")')
    const out = ex.logs.stdout.join('')
    assert.ok(out.includes('\u0000\u0001') && out.includes('\u00ff'), `stdout: ${JSON.stringify(out.slice(0, 80))}`)
    assert.equal((await sbx.runCode('2 + 2')).text, '4')
  })
})

describe('runCode (java)', { timeout: 240_000 }, () => {
  // A sandbox of its own: its global envs are part of the test, and the
  // JVM should not share memory with the other file's kernels. Last in the
  // file, so that the shared sandbox's lifetime does not pay for JVM starts.
  let jsbx
  before(async () => {
    jsbx = await Sandbox.create({ timeoutMs: 300_000, envs: { TEST_ENV_VAR: 'supertest' } })
  })
  after(async () => {
    await jsbx?.kill().catch(() => {})
  })
  const java = (code, opts = {}) => jsbx.runCode(code, { language: 'java', timeoutMs: 60_000, ...opts })

  test('println arrives as upstream sends it: the text, then the line end', async () => {
    const ex = await java('System.out.println("Hello, World!")')
    assert.equal(ex.error, undefined)
    assert.equal(ex.logs.stdout[0], 'Hello, World!')
    assert.deepEqual(ex.logs.stdout, ['Hello, World!', '\n'])
    const err = await java('System.err.print("é 日本")')
    assert.deepEqual(err.logs.stderr, ['é 日本'])
  })

  test('the working directory is user.dir; a context has its own', async () => {
    assert.equal((await java('System.getProperty("user.dir")')).text, '/home/user')
    const ctx = await jsbx.createCodeContext({ language: 'java', cwd: '/tmp' })
    assert.equal((await jsbx.runCode('System.getProperty("user.dir")', { context: ctx })).text, '/tmp')
    await jsbx.removeCodeContext(ctx)
  })

  test('envs are system properties: global, per execution, an overwrite restored', async () => {
    assert.equal((await java('System.getProperty("TEST_ENV_VAR")')).text, 'supertest')
    const tricky = 'a "q" \\u0022 \\ \n日本'
    assert.equal((await java('System.getProperty("FOO")', { envs: { FOO: tricky } })).text, tricky)
    assert.equal((await java('System.getProperty("FOO", "default")')).text, 'default')
    assert.equal((await java('System.getProperty("TEST_ENV_VAR")', { envs: { TEST_ENV_VAR: 'overwrite' } })).text, 'overwrite')
    assert.equal((await java('System.getProperty("TEST_ENV_VAR")')).text, 'supertest')
  })

  test('values are shown as String.valueOf; state persists across cells', async () => {
    assert.equal((await java('"a" + "b"')).text, 'ab')
    assert.equal((await java('int n = 6;')).results.length, 0)
    await java('import java.util.*;\nList<Integer> l = new ArrayList<>(List.of(n, 7));\nint times(int a, int b) { return a * b; }')
    assert.equal((await java('times(l.get(0), l.get(1))')).text, '42')
    assert.equal((await java('l')).text, '[6, 7]')
    assert.equal((await java('System.getProperty("no.such.property")')).results.length, 0, 'null is no result')
  })

  test('a compile error and an exception are errors with name, value and traceback', async () => {
    const bad = await java('int x = "s";')
    assert.equal(bad.error?.name, 'CompilationException')
    assert.match(bad.error.value, /incompatible types/)
    assert.match(bad.error.traceback, /int x = "s";/)
    const thrown = await java('int[] a = new int[1];\na[0] = 1 / 0;')
    assert.equal(thrown.error?.name, 'java.lang.ArithmeticException')
    assert.equal(thrown.error.value, '/ by zero')
    assert.match(thrown.error.traceback, /ArithmeticException: \/ by zero/)
  })

  test('a run past timeoutMs is interrupted and the context keeps its state; a restart clears it', async () => {
    const ctx = await jsbx.createCodeContext({ language: 'java' })
    await jsbx.runCode('int kept = 42;', { context: ctx, timeoutMs: 60_000 })
    await assert.rejects(jsbx.runCode('while (true) { }', { context: ctx, timeoutMs: 3_000 }))
    await assert.rejects(jsbx.runCode('Thread.sleep(60_000)', { context: ctx, timeoutMs: 3_000 }))
    assert.equal((await jsbx.runCode('kept', { context: ctx, timeoutMs: 60_000 })).text, '42')
    await jsbx.restartCodeContext(ctx)
    const gone = await jsbx.runCode('kept', { context: ctx, timeoutMs: 60_000 })
    assert.equal(gone.error?.name, 'CompilationException')
    await jsbx.removeCodeContext(ctx)
  })
})
