// Preloaded with `node --import`: names under WARREN_TLS_DOMAIN resolve to
// WARREN_TLS_ADDR, as wildcard DNS would send them to warren, without
// touching the host's resolver. Every other name resolves as usual.
import dns from 'node:dns'

const domain = process.env.WARREN_TLS_DOMAIN
const addr = process.env.WARREN_TLS_ADDR
const lookup = dns.lookup

dns.lookup = function (host, options, callback) {
  if (typeof options === 'function') {
    callback = options
    options = {}
  }
  if (domain && addr && (host === domain || host.endsWith('.' + domain))) {
    if (typeof options === 'object' && options?.all) {
      process.nextTick(callback, null, [{ address: addr, family: 4 }])
    } else {
      process.nextTick(callback, null, addr, 4)
    }
    return
  }
  return lookup.call(this, host, options, callback)
}
