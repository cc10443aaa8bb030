// The volume benchmark's measurements (volume_bench_test.go's
// BenchmarkVolumes): cold creates with one volume mounted and without,
// interleaved so that drift in the machine's load hits both alike;
// sequential write and read of 256 MiB (dd, fsync, then the page cache
// dropped: the host's, which is runc's, as the benchmark runs as root, and
// the sandbox's own where it may) and 10k small-file creates, each on the
// volume and on the sandbox's own disk, in the same sandbox. Prints one
// JSON object on stdout; progress goes to stderr.

import { writeFileSync } from 'node:fs'

import { Sandbox, Volume, sh, volumeName } from './lib.mjs'

const creates = Number(process.env.E2E_BENCH_CREATES || 8)
const runs = Number(process.env.E2E_BENCH_RUNS || 3)
const log = (...a) => console.error(...a)

async function timedCreate(opts) {
  const t0 = performance.now()
  const sbx = await Sandbox.create({ timeoutMs: 120_000, ...opts })
  const ms = performance.now() - t0
  await sbx.kill()
  return ms
}

// ms runs a shell snippet that prints its own elapsed nanoseconds last.
async function ms(sbx, body) {
  const out = await sh(sbx, `s=$(date +%s%N); ${body}; e=$(date +%s%N); echo $(( (e - s) / 1000 ))`)
  return Number(out.trim().split('\n').pop()) / 1000
}

// dropHostCache drops the host's page cache (root only), so that a read
// on runc comes from the disk; gVisor's sentry keeps its own cache.
function dropHostCache() {
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '3')
    return true
  } catch {
    return false
  }
}

const MiB = 256
async function throughput(sbx, dir) {
  const f = `${dir}/bench.bin`
  const write = await ms(sbx, `dd if=/dev/zero of=${f} bs=1M count=${MiB} conv=fsync 2>/dev/null`)
  const dropped = (await sh(sbx, 'sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo yes || echo no')).trim()
  const hostDropped = dropHostCache()
  const read = await ms(sbx, `dd if=${f} of=/dev/null bs=1M 2>/dev/null`)
  await sh(sbx, `rm -f ${f}`)
  const files = await ms(sbx, `mkdir ${dir}/small && cd ${dir}/small && seq -f f%g 10000 | xargs touch && sync`)
  await sh(sbx, `rm -rf ${dir}/small`)
  return { writeMBps: MiB / (write / 1000), readMBps: MiB / (read / 1000), filesPerSec: 10000 / (files / 1000), cacheDropped: dropped === 'yes', hostCacheDropped: hostDropped }
}

const vol = await Volume.create(volumeName('bench'))
try {
  const plain = []
  const mounted = []
  await timedCreate({}) // the first create warms the template's layers
  for (let i = 0; i < creates; i++) {
    plain.push(await timedCreate({}))
    mounted.push(await timedCreate({ volumeMounts: { '/mnt/data': vol } }))
    log(`create ${i + 1}/${creates}: ${plain.at(-1).toFixed(0)} ms without, ${mounted.at(-1).toFixed(0)} ms with a volume`)
  }
  const sbx = await Sandbox.create({ timeoutMs: 900_000, volumeMounts: { '/mnt/data': vol } })
  const volume = []
  const disk = []
  try {
    for (let i = 0; i < runs; i++) {
      disk.push(await throughput(sbx, '/root'))
      volume.push(await throughput(sbx, '/mnt/data'))
      log(`io ${i + 1}/${runs}: disk ${JSON.stringify(disk.at(-1))} volume ${JSON.stringify(volume.at(-1))}`)
    }
  } finally {
    await sbx.kill()
  }
  console.log(JSON.stringify({ createMs: plain, createVolumeMs: mounted, disk, volume }))
} finally {
  await Volume.destroy(vol.volumeId).catch(() => false)
}
