// Pause, resume, snapshot and fork at the sizes issue 34 names, through
// the official e2b SDK, for `warren bench --only-resume`. For each size in
// BENCH_RESUME_MB (MiB written by a Python process in the sandbox):
// BENCH_CYCLES times pause (the answer), the time until the memory image is
// on disk (when BENCH_RECORD_DIR names the runtime's sandbox directory:
// instance.json says checkpointed; waited for, so the resume that follows
// is a restore and not a thaw), then connect and a first
// commands.run('true'); then BENCH_SNAPSHOTS createSnapshot calls (each
// deleted after). At BENCH_FORK_MB, a fork of BENCH_FORKS copies, and each
// fork's first command, one after another. The forks and their source are
// left running for the Go side to measure their memory (it kills them).
// Prints one JSON object.
import { readFile } from 'node:fs/promises'

import { Sandbox } from 'e2b'

import { holding, killAll, sleep } from './holding.mjs'

const sizes = (process.env.BENCH_RESUME_MB || '100,1024').split(',').map(Number)
const cycles = Number(process.env.BENCH_CYCLES || 5)
const snapshots = Number(process.env.BENCH_SNAPSHOTS || 3)
const forkN = Number(process.env.BENCH_FORKS || 10)
const forkMB = Number(process.env.BENCH_FORK_MB || sizes[sizes.length - 1])
const recordDir = process.env.BENCH_RECORD_DIR || ''
// BENCH_SETTLE_MS_PER_GIB: before each snapshot, a command (which waits
// for the previous snapshot's background restore) and then this long per
// GiB held, so that the pages a restore loads in the background are in
// (a checkpoint waits for them): a snapshot of a settled sandbox. 0: back
// to back.
const settlePerGiB = Number(process.env.BENCH_SETTLE_MS_PER_GIB || 0)

// checkpointed waits until the runtime's record of id says its memory is
// on disk; false without a record dir (runc, or a frozen pause).
async function checkpointed(id) {
  if (!recordDir) return false
  for (let i = 0; i < 1200; i++) {
    try {
      const rec = JSON.parse(await readFile(`${recordDir}/${id}/instance.json`, 'utf8'))
      if (rec.checkpointed) return true
    } catch {}
    await sleep(50)
  }
  throw new Error(`sandbox ${id}: no memory image after 60 s`)
}

const out = { sizes: [], fork: null, keep: [] }
let current = null
try {
  await measure()
} catch (e) {
  await killAll([current?.sandboxId, ...out.keep])
  throw e
}
console.log(JSON.stringify(out))

async function measure() {
  for (const mb of sizes) {
    const sbx = (current = await holding(mb, 900_000))
    const row = { mb, pause: [], checkpoint: [], resumeCmd: [], snapshot: [] }
    for (let i = 0; i < cycles; i++) {
      let t = performance.now()
      await sbx.pause()
      row.pause.push(performance.now() - t)
      if (await checkpointed(sbx.sandboxId)) row.checkpoint.push(performance.now() - t)
      t = performance.now()
      await sbx.connect()
      await sbx.commands.run('true')
      row.resumeCmd.push(performance.now() - t)
    }
    for (let i = 0; i < snapshots; i++) {
      if (settlePerGiB > 0) {
        await sbx.commands.run('true')
        await sleep((settlePerGiB * mb) / 1024)
      }
      const t = performance.now()
      const snap = await sbx.createSnapshot()
      row.snapshot.push(performance.now() - t)
      await Sandbox.deleteSnapshot(snap.snapshotId)
    }
    out.sizes.push(row)
    if (mb === forkMB) await fork(sbx, mb)
    else await sbx.kill()
    current = null
  }
}

async function fork(sbx, mb) {
  out.keep.push(sbx.sandboxId)
  const t = performance.now()
  const forks = await sbx.fork({ count: forkN, timeoutMs: 900_000, requestTimeoutMs: 600_000 })
  const total = performance.now() - t
  const made = forks.filter((f) => !(f instanceof Error))
  out.keep.push(...made.map((f) => f.sandboxId))
  if (made.length < forks.length) throw new Error(`${forks.length - made.length} forks failed: ${forks.find((f) => f instanceof Error)}`)
  const firstCmd = []
  for (const f of made) {
    const t = performance.now()
    await f.commands.run('true')
    firstCmd.push(performance.now() - t)
  }
  out.fork = { mb, n: forkN, totalMs: total, firstCmd, source: sbx.sandboxId, ids: made.map((f) => f.sandboxId) }
}
