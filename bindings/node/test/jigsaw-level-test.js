'use strict'
// jigsaw-level's own tests, beside abstract-level's suite: the engine's
// options and errors, and reads checked against a model over enough data
// to flush and compact (small memtables and tables), in the mode
// $JIGSAW_TEST_MODE names.
const test = require('tape')
const common = require('./common')
const { JigsawLevel, engineVersion } = require('..')

test.onFinish(common.cleanup)

// Deterministic pseudo-random numbers (xorshift).
function rng (seed) {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13; x >>>= 0
    x ^= x >>> 17
    x ^= x << 5; x >>>= 0
    return x / 0x100000000
  }
}

const key = (i) => 'k' + String(i).padStart(6, '0')

// Writes `n` random puts and deletes over `space` keys (in batches and
// single calls), returning the model: a sorted array of [key, value].
async function fill (db, n, space, seed) {
  const random = rng(seed)
  const model = new Map()
  let batch = []
  for (let i = 0; i < n; i++) {
    const k = key(Math.floor(random() * space))
    if (random() < 0.2) {
      model.delete(k)
      batch.push({ type: 'del', key: k })
    } else {
      const v = k + ':' + i + ':' + 'x'.repeat(Math.floor(random() * 200))
      model.set(k, v)
      batch.push({ type: 'put', key: k, value: v })
    }
    if (batch.length === 50) {
      if (random() < 0.5) {
        await db.batch(batch)
      } else {
        for (const op of batch) await (op.type === 'put' ? db.put(op.key, op.value) : db.del(op.key))
      }
      batch = []
    }
  }
  if (batch.length > 0) await db.batch(batch)
  return [...model.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
}

function inRange (k, o) {
  if (o.gte !== undefined ? k < o.gte : o.gt !== undefined && k <= o.gt) return false
  if (o.lte !== undefined ? k > o.lte : o.lt !== undefined && k >= o.lt) return false
  return true
}

function expected (model, o) {
  let entries = model.filter(([k]) => inRange(k, o))
  if (o.reverse) entries = entries.slice().reverse()
  if (o.limit !== undefined && o.limit >= 0) entries = entries.slice(0, o.limit)
  return entries
}

test(`version and mode (${common.mode})`, async function (t) {
  t.match(engineVersion, /^\d+\.\d+\.\d+$/, 'engineVersion is the engine\'s x.y.z')
  const db = common.factory()
  await db.open()
  t.is(db.supports.getSync, true)
  t.is(db.supports.explicitSnapshots, true)
  const device = db.getProperty('jigsaw.pmem-device')
  if (common.mode === 'disk') t.notOk(device && device.includes('/pool'), 'disk mode has no pool')
  else t.ok(typeof device === 'string' && device.length > 0, 'a pool mode describes its pmem device')
  t.is(db.getProperty('jigsaw.no-such-property'), undefined, 'an unknown property is undefined')
  await db.close()
})

test(`reads match a model across flushes and compactions (${common.mode})`, async function (t) {
  const db = common.factory()
  const model = await fill(db, 6000, 2000, 7)
  t.ok(Number(db.getProperty('jigsaw.flushes')) > 0, 'the writes flushed memtables')
  t.same(await db.iterator().all(), model, 'a full scan')
  t.same(await db.iterator({ reverse: true }).all(), model.slice().reverse(), 'a full reverse scan')
  const random = rng(11)
  for (let round = 0; round < 40; round++) {
    const a = key(Math.floor(random() * 2100))
    const b = key(Math.floor(random() * 2100))
    const o = {}
    o[random() < 0.5 ? 'gt' : 'gte'] = a < b ? a : b
    o[random() < 0.5 ? 'lt' : 'lte'] = a < b ? b : a
    o.reverse = random() < 0.5
    if (random() < 0.5) o.limit = Math.floor(random() * 30)
    t.same(await db.iterator(o).all(), expected(model, o), `iterator ${JSON.stringify(o)}`)
    // nextv in small steps and next() one at a time give the same entries.
    const it = db.iterator(o)
    const stepped = []
    for (let step = 1; ; step = (step % 7) + 1) {
      const entries = await it.nextv(step)
      if (entries.length === 0) break
      stepped.push(...entries)
    }
    await it.close()
    t.same(stepped, expected(model, o), `nextv steps ${JSON.stringify(o)}`)
  }
  const keys = []
  for (let i = 0; i < 300; i++) keys.push(key(Math.floor(random() * 2100)))
  const values = new Map(model)
  t.same(await db.getMany(keys), keys.map((k) => values.get(k)), 'getMany')
  for (const k of keys.slice(0, 50)) {
    t.is(await db.get(k), values.get(k), `get ${k}`)
    t.is(db.getSync(k), values.get(k), `getSync ${k}`)
  }
  await db.compactRange()
  t.same(await db.iterator().all(), model, 'a full scan after compactRange')
  t.ok(await db.approximateSize(key(0), key(2100)) > 0, 'approximateSize counts the tables')
  await db.close()
  await db.open()
  t.same(await db.iterator().all(), model, 'a full scan after reopening')
  await db.close()
})

test(`getSync's values stay whole as its slab fills and is replaced (${common.mode})`, async function (t) {
  const db = common.factory({ keyEncoding: 'utf8', valueEncoding: 'buffer' })
  await db.open()
  const value = (i) => Buffer.alloc(100 + (i % 50), i % 251)
  const big = Buffer.alloc(200 << 10, 7) // larger than a slab: copied whole
  const batch = []
  for (let i = 0; i < 2000; i++) batch.push({ type: 'put', key: `k${i}`, value: value(i) })
  batch.push({ type: 'put', key: 'big', value: big })
  await db.batch(batch)
  // 2000 values of 100-149 bytes fill several 64 KiB slabs; every Buffer
  // handed out keeps its bytes.
  const read = []
  for (let i = 0; i < 2000; i++) read.push(db.getSync(`k${i}`))
  const whole = read.every((v, i) => Buffer.isBuffer(v) && v.equals(value(i)))
  t.ok(whole, 'every value read is a Buffer of its bytes, after later reads')
  t.ok(db.getSync('big').equals(big), 'a value larger than the slab')
  t.is(db.getSync('absent'), undefined, 'a missing key')
  await db.close()
  t.throws(() => db.getSync('k1'), /not open/, 'getSync after close')
})

test(`seek within a range, both directions (${common.mode})`, async function (t) {
  const db = common.factory()
  const model = await fill(db, 3000, 1000, 3)
  const random = rng(5)
  for (let round = 0; round < 30; round++) {
    const reverse = random() < 0.5
    const o = { gte: key(100), lt: key(900), reverse }
    const target = key(Math.floor(random() * 1000))
    const it = db.iterator(o)
    it.seek(target)
    const got = await it.nextv(5)
    await it.close()
    const want = !inRange(target, o)
      ? []
      : expected(model, o).filter(([k]) => (reverse ? k <= target : k >= target)).slice(0, 5)
    t.same(got, want, `seek ${target} reverse=${reverse}`)
  }
  await db.close()
})

test(`clear over a range, with a snapshot and a limit (${common.mode})`, async function (t) {
  const db = common.factory()
  let model = await fill(db, 3000, 1000, 9)
  const snapshot = db.snapshot()
  await db.put(key(500) + 'late', 'written after the snapshot')
  await db.clear({ gte: key(200), lt: key(400), snapshot })
  model = model.filter(([k]) => !inRange(k, { gte: key(200), lt: key(400) }))
  const late = [key(500) + 'late', 'written after the snapshot']
  const withLate = model.concat([late]).sort((a, b) => (a[0] < b[0] ? -1 : 1))
  t.same(await db.iterator().all(), withLate, 'clear deleted the range as the snapshot saw it')
  await snapshot.close()
  const victims = expected(withLate, { gte: key(600), reverse: true, limit: 25 }).map(([k]) => k)
  await db.clear({ gte: key(600), reverse: true, limit: 25 })
  t.same(await db.iterator().all(), withLate.filter(([k]) => !victims.includes(k)), 'clear with reverse and limit')
  await db.close()
})

test(`writes not awaited are in the database after close (${common.mode})`, async function (t) {
  const db = common.factory()
  await db.open()
  const writes = []
  for (let i = 0; i < 500; i++) writes.push(db.put(key(i), 'v' + i))
  writes.push(db.batch([{ type: 'del', key: key(0) }]))
  await db.close()
  await Promise.all(writes)
  await db.open()
  t.is(await db.get(key(0)), undefined)
  t.is(await db.get(key(499)), 'v499')
  t.is((await db.keys().all()).length, 499)
  await db.close()
})

test(`a second open of the same database is LEVEL_LOCKED (${common.mode})`, async function (t) {
  const { dir, options } = common.location()
  const first = new JigsawLevel(dir, options)
  await first.open()
  const second = new JigsawLevel(dir, options)
  try {
    await second.open()
    t.fail('the second open succeeded')
  } catch (err) {
    t.is(err.code, 'LEVEL_DATABASE_NOT_OPEN')
    t.is(err.cause && err.cause.code, 'LEVEL_LOCKED', err.cause && err.cause.message)
  }
  await first.put('a', 'b')
  await first.close()
  await second.open()
  t.is(await second.get('a'), 'b', 'opens once the first has closed')
  await second.close()
})

test(`bad options are errors, not crashes (${common.mode})`, async function (t) {
  const { dir, options } = common.location()
  const bad = new JigsawLevel(dir, { ...options, mode: 'floppy' })
  const err = await bad.open().then(() => null, (e) => e)
  t.ok(err && /mode must be 'pmem', 'hybrid' or 'disk'/.test(err.cause && err.cause.message), 'an unknown mode')
  const snappy = new JigsawLevel(common.location().dir, { ...options, compression: 'snappy' })
  const err3 = await snappy.open().then(() => null, (e) => e)
  t.ok(err3 && /compression must be/.test(err3.cause && err3.cause.message), 'an unknown compression')
  const tiny = new JigsawLevel(common.location().dir, { ...options, memtableSize: 1 })
  const err2 = await tiny.open().then(() => null, (e) => e)
  t.is(err2 && err2.cause && err2.cause.code, 'LEVEL_INVALID_ARGUMENT', err2 && err2.cause && err2.cause.message)
  t.throws(() => new JigsawLevel(''), /location/, 'an empty location')
  // abstract-level encodes what it is given; the addon itself refuses
  // anything but a string, a Buffer or a Uint8Array.
  const native = new (require('../lib/addon').Database)()
  const at = common.location()
  await native.open(at.dir, { ...at.options, createIfMissing: true })
  t.throws(() => native.put(123, 'v', false), TypeError, 'a number key')
  t.throws(() => native.get(new Uint16Array(2), {}), TypeError, 'a Uint16Array key')
  t.throws(() => native.batch([{ type: 'merge', key: 'a' }], false), TypeError, 'an unknown batch type')
  await native.put('still', 'works', false)
  t.is(await native.get('still', { valueEncoding: 'utf8' }), 'works', 'and the database still works')
  await native.close()
  t.throws(() => native.getSync('still', {}), /not open/, 'a call after close')
})

test(`binary keys and values, and their encodings (${common.mode})`, async function (t) {
  const db = common.factory({ keyEncoding: 'buffer', valueEncoding: 'view' })
  const bytes = Uint8Array.from([0, 255, 1, 254, 0])
  await db.put(Buffer.from([0, 0]), bytes.subarray(1, 4))
  const value = await db.get(Buffer.from([0, 0]))
  t.ok(value instanceof Uint8Array, 'a view')
  t.same([...value], [255, 1, 254], 'the bytes of a subarray, not its whole buffer')
  t.same(await db.keys().all(), [Buffer.from([0, 0])])
  await db.put(Buffer.alloc(0), Buffer.alloc(0))
  t.same([...(await db.get(Buffer.alloc(0)))], [], 'an empty key and value')
  await db.close()
})

test(`a seek outside the range ends an iterator that has read (${common.mode})`, async function (t) {
  const db = common.factory()
  await db.batch('abcdefgh'.split('').map((k) => ({ type: 'put', key: k, value: k })))
  for (const reverse of [false, true]) {
    const it = db.iterator({ gte: 'b', lt: 'g', reverse })
    t.is((await it.nextv(1)).length, 1)
    it.seek(reverse ? 'a' : 'z')
    t.same(await it.nextv(10), [], `reverse=${reverse}: nothing after an out-of-range seek`)
    it.seek('d')
    t.same((await it.nextv(1))[0], ['d', 'd'], `reverse=${reverse}: a seek back into the range reads again`)
    await it.close()
  }
  await db.close()
})

test(`a snapshot of another database is refused (${common.mode})`, async function (t) {
  const one = common.factory()
  const two = common.factory()
  await one.put('a', '1')
  await two.open()
  const foreign = two.snapshot()
  const err = await one.get('a', { snapshot: foreign }).then(() => null, (e) => e)
  t.ok(err && /snapshot must come from this database/.test(err.message), 'get')
  t.throws(() => one.iterator({ snapshot: foreign }), /snapshot must come from this database/, 'iterator')
  await foreign.close()
  await one.close()
  await two.close()
})

test(`the addon loaded by a worker thread leaves the main thread's databases working (${common.mode})`, async function (t) {
  const { Worker } = require('worker_threads')
  const db = common.factory()
  await db.put('a', '1')
  const { dir, options } = common.location()
  const worker = new Worker(`
    const { JigsawLevel } = require(${JSON.stringify(require.resolve('..'))})
    const { parentPort, workerData } = require('worker_threads')
    const db = new JigsawLevel(workerData.dir, workerData.options)
    db.put('w', 'x').then(() => { db.put('never', 'awaited'); parentPort.postMessage('written'); process.exit(0) })
  `, { eval: true, workerData: { dir, options } })
  const message = await new Promise((resolve, reject) => { worker.on('message', resolve); worker.on('error', reject) })
  await new Promise((resolve) => worker.on('exit', resolve))
  t.is(message, 'written')
  t.same(await db.iterator().all(), [['a', '1']], 'an iterator made after the worker exited')
  const snapshot = db.snapshot()
  t.is(await db.get('a', { snapshot }), '1', 'a snapshot too')
  await snapshot.close()
  await db.close()
  const reopened = new JigsawLevel(dir, options)
  t.is(await reopened.get('w'), 'x', 'the worker\'s database holds what it wrote')
  await reopened.close()
})
