'use strict'
// Per-call cost of the Node binding: put and get of N entries.
//
//   JIGSAW_LEVEL_ADDON=<build>/bindings/node/jigsaw_level.node node bench.js [--num N] [--mode M] [--dir D] [--rounds R] [--json F]
//
// Writes N random 16-byte keys with 100-byte values (the paper's entries,
// as jigsaw_bench's fillrandom and bindings/python/bench.py) one awaited
// put at a time, then reads each back in another random order (its keys
// copied into new Buffers in that order). R rounds, after one that warms
// the caches, each read every key once on the same open database, a third
// of them each (alternate chunks of 4096 keys, shifted each round) with:
// getSync (on the JavaScript thread), the addon's getSync without
// abstract-level around it, and the C++ API's DB::Get called from C++ (the
// addon's cppGetLoop: one ReadOptions and one value string reused, as a
// C++ program reads). Then get awaited one at a
// time (each call a trip through libuv's thread pool), and get with 64
// calls in flight. Prints microseconds per call and getSync's ratio to the
// C++ Get, per round and as the median. Keys and values are Buffers (no
// string conversion).
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
  const rounds = Number(arg('rounds', 5))
  const base = arg('dir', mode === 'disk' ? os.tmpdir() : '/dev/shm')
  const dir = fs.mkdtempSync(path.join(base, 'jigsaw-level-bench-'))
  const pool = mode === 'hybrid' ? fs.mkdtempSync('/dev/shm/jigsaw-level-bench-pool-') : null
  let keys = []
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
    // The read order, each key a new Buffer made in that order: the keys
    // lie in memory in the order the loops read them, so no loop -- the C++
    // one included -- waits on a cache miss to find its next key.
    shuffle(keys, 977)
    keys = keys.map((k) => Buffer.from(k))
    // The addon's own call, without abstract-level's checks and encodings.
    const native = db[Object.getOwnPropertySymbols(db).find((s) => s.description === 'native')]
    // Each round splits the keys into chunks of 4096 and gives them in turn
    // to the three loops (shifted by one each round), so all meet the same
    // noise and none finds the blocks another just read in its caches.
    const loops = [
      (part) => { let n = 0; for (const k of part) n += db.getSync(k) !== undefined; return n },
      (part) => { let n = 0; for (const k of part) n += native.getSync(k, null, 0) >= 0; return n },
      null // the C++ loop, timed in C++
    ]
    const chunk = 4096
    const ratios = []
    const getSyncs = []
    const cpps = []
    for (let round = 0; round <= rounds; round++) {
      const seconds = [0, 0, 0]
      const found = [0, 0, 0]
      for (let c = 0, i = 0; i < num; c++, i += chunk) {
        const part = keys.slice(i, i + chunk)
        const which = (c + round) % 3
        if (loops[which] === null) {
          const [n, s] = native.cppGetLoop(part)
          seconds[which] += s
          found[which] += n
        } else {
          const start = process.hrtime.bigint()
          found[which] += loops[which](part)
          seconds[which] += Number(process.hrtime.bigint() - start) / 1e9
        }
      }
      if (found[0] + found[1] + found[2] !== num) throw new Error(`found ${found} of ${num} keys`)
      if (round === 0) continue // warms the caches
      const [getSyncUs, nativeUs, cppUs] = seconds.map((s, i) => s * 1e6 / found[i])
      ratios.push(getSyncUs / cppUs)
      getSyncs.push(getSyncUs)
      cpps.push(cppUs)
      console.log(`Node, round ${round}: getSync ${getSyncUs.toFixed(3)} us/op, ` +
        `the addon's getSync alone ${nativeUs.toFixed(3)} us/op, C++ Get ${cppUs.toFixed(3)} us/op, ` +
        `ratio ${ratios[ratios.length - 1].toFixed(2)}`)
    }
    const median = (xs) => xs.slice().sort((x, y) => x - y)[xs.length >> 1]
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
    const result = {
      binding: 'node',
      mode,
      num,
      rounds,
      put_us: put.us,
      get_sync_us: median(getSyncs),
      cpp_get_us: median(cpps),
      ratio: median(ratios),
      get_us: get.us,
      get_in_flight_us: getParallel.us
    }
    if (arg('json')) fs.writeFileSync(arg('json'), JSON.stringify(result, null, 1) + '\n')
    console.log(`Node, mode ${mode}, ${num} entries: put ${put.us.toFixed(3)} us/op, ` +
      `medians of ${rounds} rounds: getSync ${median(getSyncs).toFixed(3)} us/op, ` +
      `C++ Get ${median(cpps).toFixed(3)} us/op, ratio ${median(ratios).toFixed(2)}; ` +
      `get ${get.us.toFixed(3)} us/op (${get.found} found), ` +
      `get with ${inFlight} in flight ${getParallel.us.toFixed(3)} us/op (${getParallel.found} found)`)
    await db.close()
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
    if (pool) fs.rmSync(pool, { recursive: true, force: true })
  }
}

main().catch((err) => { console.error(err); process.exitCode = 1 })
