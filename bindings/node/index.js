'use strict'
// jigsaw-level: JigsawDB as an abstract-level database (README.md).
// The storage work is native (src/binding.cc, loaded by lib/addon.js);
// this file maps abstract-level's private methods onto it.
const fs = require('fs')
const { AbstractLevel, AbstractIterator, AbstractSnapshot } = require('abstract-level')
const ModuleError = require('module-error')
const addon = require('./lib/addon')

const kNative = Symbol('native')
const kPending = Symbol('pending')
const kTrack = Symbol('track')
const kLocation = Symbol('location')
const kCache = Symbol('cache')
const kFetch = Symbol('fetch')
const kEngineOptions = Symbol('engineOptions')

// The engine's own options (fixed for a database's lifetime): kept by the
// database, not passed through abstract-level's open().
const engineOptionNames = ['mode', 'pmemPath', 'poolSize', 'pmemBudget', 'memtableSize', 'tableSize',
  'blockSize', 'blockCacheSize', 'paranoidChecks', 'compression']

function splitOptions (options) {
  const levelOptions = { ...options }
  const engineOptions = {}
  for (const name of engineOptionNames) {
    if (name in levelOptions) {
      engineOptions[name] = levelOptions[name]
      delete levelOptions[name]
    }
  }
  return { levelOptions, engineOptions }
}

// Entries an iterator's next() reads ahead at most (nextv reads what it is
// asked for).
const kReadAhead = 256

// getSync copies a value into the slab; the caller gets a Buffer viewing
// those bytes, and the next value goes after them (8-byte aligned). A full
// slab is replaced; the views keep the old one alive.
const kSlabSize = 64 << 10
let slab = Buffer.allocUnsafeSlow(kSlabSize)
let slabOffset = 0
addon.setSlab(slab)

// Node's own Buffer class (what Buffer.from and subarray construct), which
// its species getter hands out: constructed directly, a view costs about
// half what subarray's species lookup does.
const FastBuffer = Buffer[Symbol.species]

function takeFromSlab (length) {
  const value = new FastBuffer(slab.buffer, slab.byteOffset + slabOffset, length)
  slabOffset = (slabOffset + length + 7) & ~7
  if (slabOffset > kSlabSize - 1024) {
    slab = Buffer.allocUnsafeSlow(kSlabSize)
    slabOffset = 0
    addon.setSlab(slab)
  }
  return value
}

class JigsawSnapshot extends AbstractSnapshot {
  constructor (native, options) {
    super(options)
    this[kNative] = native
  }

  async _close () {
    this[kNative].close()
  }
}

// The native snapshot an options object names (abstract-level passes its
// own snapshot object).
function nativeOptions (options) {
  if (options.snapshot == null) return options
  return { ...options, snapshot: options.snapshot[kNative] }
}

class JigsawIterator extends AbstractIterator {
  constructor (db, native, options) {
    super(db, options)
    this[kNative] = native
    this[kCache] = []
  }

  // Up to `size` entries as [key, value] pairs; [] at the end.
  async [kFetch] (size) {
    const flat = await this[kNative].nextv(size)
    const entries = new Array(flat.length / 2)
    for (let i = 0; i < entries.length; i++) entries[i] = [flat[2 * i], flat[2 * i + 1]]
    return entries
  }

  async _next () {
    if (this[kCache].length === 0) {
      const size = Math.max(1, Math.min(kReadAhead, this.limit - this.count))
      this[kCache] = (await this[kFetch](size)).reverse()
    }
    return this[kCache].pop()
  }

  async _nextv (size, options) {
    const cached = this[kCache].reverse()
    this[kCache] = []
    if (cached.length >= size) {
      this[kCache] = cached.slice(size).reverse()
      return cached.slice(0, size)
    }
    return cached.concat(await this[kFetch](size - cached.length))
  }

  _seek (target, options) {
    this[kCache] = []
    this[kNative].seek(target)
  }

  async _close () {
    this[kCache] = []
    this[kNative].close()
  }
}

class JigsawLevel extends AbstractLevel {
  // options: abstract-level's (keyEncoding, valueEncoding, createIfMissing,
  // errorIfExists) and the engine's: mode ('pmem' | 'hybrid' | 'disk'),
  // pmemPath, poolSize, pmemBudget, memtableSize, tableSize (blockSize: its
  // old name), blockCacheSize, paranoidChecks, compression (README.md).
  constructor (location, options) {
    if (typeof location !== 'string' || location === '') {
      throw new TypeError("The first argument 'location' must be a non-empty string")
    }
    const { levelOptions, engineOptions } = splitOptions(options)
    super({
      encodings: { buffer: true, view: true, utf8: true },
      createIfMissing: true,
      errorIfExists: true,
      explicitSnapshots: true,
      getSync: true,
      additionalMethods: { approximateSize: true, compactRange: true, getProperty: true }
    }, levelOptions)
    this[kLocation] = location
    this[kEngineOptions] = engineOptions
    this[kNative] = new addon.Database()
    this[kPending] = new Set()
  }

  get location () {
    return this[kLocation]
  }

  // Runs a native call that returns a promise, remembered until it settles
  // so that close waits for it.
  [kTrack] (promise) {
    const pending = this[kPending]
    pending.add(promise)
    const forget = () => { pending.delete(promise) }
    promise.then(forget, forget)
    return promise
  }

  async _open (options) {
    if (options.createIfMissing) await fs.promises.mkdir(this[kLocation], { recursive: true })
    await this[kNative].open(this[kLocation], { ...options, ...this[kEngineOptions] })
  }

  async _close () {
    await Promise.allSettled(this[kPending])
    await this[kNative].close()
  }

  async _get (key, options) {
    return this[kTrack](this[kNative].get(key, nativeOptions(options)))
  }

  _getSync (key, options) {
    const snapshot = options.snapshot == null ? null : options.snapshot[kNative]
    const found = this[kNative].getSync(key, snapshot, slabOffset)
    if (typeof found !== 'number') return options.valueEncoding === 'utf8' ? found.toString() : found
    if (found < 0) return undefined
    if (options.valueEncoding === 'utf8') return slab.toString('utf8', slabOffset, slabOffset + found)
    return takeFromSlab(found)
  }

  async _getMany (keys, options) {
    return this[kTrack](this[kNative].getMany(keys, nativeOptions(options)))
  }

  async _put (key, value, options) {
    return this[kTrack](this[kNative].put(key, value, options.sync === true))
  }

  async _del (key, options) {
    return this[kTrack](this[kNative].del(key, options.sync === true))
  }

  async _batch (operations, options) {
    return this[kTrack](this[kNative].batch(operations, options.sync === true))
  }

  async _clear (options) {
    return this[kTrack](this[kNative].clear(nativeOptions(options)))
  }

  _iterator (options) {
    // Native limits count what is read ahead: the base class counts instead.
    const native = this[kNative].iterator({ ...nativeOptions(options), limit: -1 })
    return new JigsawIterator(this, native, options)
  }

  _snapshot (options) {
    return new JigsawSnapshot(this[kNative].snapshot(), options)
  }

  // The engine's property text (include/jigsaw/db.h, e.g.
  // 'jigsaw.stats'), or undefined.
  getProperty (name) {
    if (this.status !== 'open') throw notOpen()
    return this[kNative].getProperty(String(name))
  }

  // The bytes the tables hold for keys in [start, end).
  async approximateSize (start, end, options) {
    if (this.status === 'opening') await this.open()
    if (this.status !== 'open') throw notOpen()
    const keyEncoding = this.keyEncoding(options && options.keyEncoding)
    return this[kTrack](this[kNative].approximateSize(keyEncoding.encode(start), keyEncoding.encode(end)))
  }

  // Compacts the keys in [start, end] (null or undefined: unbounded).
  async compactRange (start, end, options) {
    if (this.status === 'opening') await this.open()
    if (this.status !== 'open') throw notOpen()
    const keyEncoding = this.keyEncoding(options && options.keyEncoding)
    const encode = (k) => (k == null ? null : keyEncoding.encode(k))
    return this[kTrack](this[kNative].compactRange(encode(start), encode(end)))
  }
}

function notOpen () {
  return new ModuleError('Database is not open', { code: 'LEVEL_DATABASE_NOT_OPEN' })
}

exports.JigsawLevel = JigsawLevel
exports.engineVersion = addon.engineVersion
