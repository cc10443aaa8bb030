// A small PNG reader for the desktop tests: 8-bit RGB or RGBA,
// non-interlaced, which is what scrot writes. It returns the pixels so a
// test can compare regions of two screenshots, not only their sizes.

import zlib from 'node:zlib'

const SIGNATURE = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10])

// decodePNG returns {width, height, channels, pixels} with pixels as rows of
// width*channels bytes, unfiltered.
export function decodePNG(buf) {
  buf = Buffer.from(buf)
  if (!buf.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG')
  let off = 8
  let width, height, channels
  const idat = []
  while (off < buf.length) {
    const len = buf.readUInt32BE(off)
    const type = buf.toString('latin1', off + 4, off + 8)
    const data = buf.subarray(off + 8, off + 8 + len)
    off += 12 + len
    if (type === 'IHDR') {
      width = data.readUInt32BE(0)
      height = data.readUInt32BE(4)
      const [depth, colour, , , interlace] = data.subarray(8, 13)
      if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6)) {
        throw new Error(`unsupported PNG: depth ${depth}, colour type ${colour}, interlace ${interlace}`)
      }
      channels = colour === 2 ? 3 : 4
    } else if (type === 'IDAT') {
      idat.push(data)
    } else if (type === 'IEND') {
      break
    }
  }
  const raw = zlib.inflateSync(Buffer.concat(idat))
  const stride = width * channels
  const pixels = Buffer.alloc(stride * height)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    const out = pixels.subarray(y * stride, (y + 1) * stride)
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : null
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[x - channels] : 0
      const b = prev ? prev[x] : 0
      const c = prev && x >= channels ? prev[x - channels] : 0
      out[x] = (line[x] + predict(filter, a, b, c)) & 0xff
    }
  }
  return { width, height, channels, pixels }
}

function predict(filter, a, b, c) {
  switch (filter) {
    case 0: return 0
    case 1: return a
    case 2: return b
    case 3: return (a + b) >> 1
    case 4: {
      const p = a + b - c
      const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c)
      return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
    }
    default: throw new Error(`bad PNG filter ${filter}`)
  }
}

// changedPixels counts the pixels of the rectangle {x, y, w, h} whose RGB
// differs between two decoded images of the same size.
export function changedPixels(a, b, { x, y, w, h }) {
  if (a.width !== b.width || a.height !== b.height) throw new Error('images differ in size')
  let n = 0
  for (let row = y; row < y + h; row++) {
    for (let col = x; col < x + w; col++) {
      const ia = (row * a.width + col) * a.channels
      const ib = (row * b.width + col) * b.channels
      if (a.pixels[ia] !== b.pixels[ib] || a.pixels[ia + 1] !== b.pixels[ib + 1] || a.pixels[ia + 2] !== b.pixels[ib + 2]) n++
    }
  }
  return n
}
