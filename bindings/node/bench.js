'use strict'
// Per-call cost of the Node binding: put and get of N entries.
//
//   JIGSAW_LEVEL_ADDON=<build>/bindings/node/jigsaw_level.node node bench.js [--num N] [--mode M] [--dir D]
//
// Writes N random 16-byte keys with 100-byte values (the paper's entries,
// as jigsaw_bench's fillrandom and bindings/python/bench.py) one awaited
// put at a time, then reads each back in another random order four ways:
// getSync (on the JavaScript thread), the addon's getSync without
// abstract-level around it, get awaited one at a time (each call a trip
// through libuv's thread pool), and get with 64 calls in flight.
// Prints microseconds per call. `jigsaw_bench --benchmarks=fillrandom,
// readrandom --num=N --mode=M` gives the C++ API's cost on the same
// entries. Keys and values are Buffers (no string conversion).
const fs = require('fs')
const os = require('os')
const path = require('path')
const { JigsawLevel } = require('.')

function arg (name, fallback) {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : fallback
}

// Deterministic shuffle (xorshift).
function shuffle (array, seed) {
  let x = seed
  for (let i = array.length - 1; i > 0; i--) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0
    const j = x % (i + 1)
    const t = array[i]; array[i] = array[j]; array[j] = t
  }
}

async function main () {
  const num = Number(arg('num', 1000000))
  const mode = arg('mode', 'pmem')
  const base = arg('dir', mode === 'disk' ? os.tmpdir() : '/dev/shm')
  const dir = fs.mkdtempSync(path.join(base, 'jigsaw-level-bench-'))
  const pool = mode === 'hybrid' ? fs.mkdtempSync('/dev/shm/jigsaw-level-bench-pool-') : null
  const keys = []
  for (let i = 0; i < num; i++) keys.push(Buffer.from(String(i).padStart(16, '0')))
  shuffle(keys, 301)
  const value = Buffer.alloc(100)
  for (let i = 0; i < value.length; i++) value[i] = (i * 131 + 7) & 0xff
  const options = { mode, poolSize: 4 * 2 ** 30, keyEncoding: 'buffer', valueEncoding: 'buffer' }
  if (pool) options.pmemPath = path.join(pool, 'pool')
  const db = new JigsawLevel(path.join(dir, 'db'), options)
  try {
    await db.open()
    const time = async (body) => {
      const start = process.hrtime.bigint()
      const found = await body()
      return { us: Number(process.hrtime.bigint() - start) / 1000 / num, found }
    }
    const put = await time(async () => { for (const k of keys) await db.put(k, value) })
    shuffle(keys, 977)
    const getSync = await time(() => {
      let found = 0
      for (const k of keys) found += db.getSync(k) !== undefined
      return found
    })
    // The addon's own call, without abstract-level's checks and encodings.
    const native = db[Object.getOwnPropertySymbols(db).find((s) => s.description === 'native')]
    const slab = Buffer.allocUnsafe(64 << 10)
    const nativeGetSync = await time(() => {
      let found = 0
      for (const k of keys) found += native.getSync(k, null, slab, 0) >= 0
      return found
    })
    const get = await time(async () => {
      let found = 0
      for (const k of keys) found += (await db.get(k)) !== undefined
      return found
    })
    const inFlight = 64
    const getParallel = await time(async () => {
      let found = 0
      let next = 0
      const worker = async () => {
        while (next < keys.length) {
          const value = await db.get(keys[next++])
          if (value !== undefined) found++
        }
      }
      await Promise.all(Array.from({ length: inFlight }, worker))
      return found
    })
    console.log(`mode ${mode}, ${num} entries: put ${put.us.toFixed(3)} us/op, ` +
      `getSync ${getSync.us.toFixed(3)} us/op (${getSync.found} found), ` +
      `the addon's getSync alone ${nativeGetSync.us.toFixed(3)} us/op (${nativeGetSync.found} found), ` +
      `get ${get.us.toFixed(3)} us/op (${get.found} found), ` +
      `get with ${inFlight} in flight ${getParallel.us.toFixed(3)} us/op (${getParallel.found} found)`)
    await db.close()
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
    if (pool) fs.rmSync(pool, { recursive: true, force: true })
  }
}

main().catch((err) => { console.error(err); process.exitCode = 1 })
