import { Sandbox } from 'e2b'
const sbx = await Sandbox.create({ timeoutMs: 600_000 })
console.log(sbx.sandboxId)
const r = await sbx.commands.run('grep -E "VmRSS|RssAnon|RssFile|Threads" /proc/1/status; cat /proc/meminfo | head -8; ps -eo pid,rss,args | head; ls -la /.warren/envd', { user: 'root' })
console.log(r.stdout)
