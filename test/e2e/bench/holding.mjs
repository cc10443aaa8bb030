// Shared by the pause benchmarks: a sandbox whose Python process has
// written (so holds resident) mb MiB.
import { Sandbox } from 'e2b'

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

export async function holding(mb, timeoutMs = 600_000) {
  const sbx = await Sandbox.create({ timeoutMs })
  await sbx.commands.run(
    `python3 -c "b = bytearray(b'x') * (${mb} << 20); open('/tmp/ready', 'w').close(); import time; time.sleep(1e6)"`,
    { background: true, timeoutMs: 0 })
  for (let i = 0; i < 1200; i++) {
    if (await sbx.files.exists('/tmp/ready')) return sbx
    await sleep(100)
  }
  await sbx.kill()
  throw new Error(`no process holding ${mb} MiB after 120 s (the server's --default-memory must leave room; on runsc, envd's OOM guard keeps a sixth of the sandbox's memory free)`)
}

// killAll kills the sandboxes a failed run leaves, by id.
export async function killAll(ids) {
  await Promise.allSettled(ids.filter(Boolean).map((id) => Sandbox.kill(id)))
}
