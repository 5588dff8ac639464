'use strict'
// The storage mode the tests run in ($JIGSAW_TEST_MODE: pmem, hybrid or
// disk) and a factory of fresh databases in it: pmem and the pools on
// tmpfs (/dev/shm, DRAM-emulated pmem), disk-mode directories in the
// system's temporary directory. Small sizes: the abstract-level suite
// keeps hundreds of databases open at once.
const fs = require('fs')
const os = require('os')
const path = require('path')
const { JigsawLevel } = require('..')

const mode = process.env.JIGSAW_TEST_MODE || 'pmem'
if (!['pmem', 'hybrid', 'disk'].includes(mode)) throw new Error(`JIGSAW_TEST_MODE must be pmem, hybrid or disk, not ${mode}`)

const shm = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir()
const roots = []
const root = (dir) => {
  const r = fs.mkdtempSync(path.join(dir, 'jigsaw-level-'))
  roots.push(r)
  return r
}
const dataRoot = root(mode === 'pmem' ? shm : os.tmpdir())
const poolRoot = mode === 'hybrid' ? root(shm) : null
let n = 0

// The smallest pool the engine takes: tmpfs gives a pool all its memory
// when it is created.
const sizes = { poolSize: 16 << 20, memtableSize: 256 << 10, tableSize: 256 << 10 }

// A fresh location (an existing empty directory, as abstract-level's own
// tests use) and the options its mode needs.
function location () {
  const name = String(n++)
  const dir = path.join(dataRoot, name)
  fs.mkdirSync(dir)
  const options = { mode, ...sizes }
  // Disk mode's tables compressed: the whole suite reads them.
  if (mode === 'disk') options.compression = 'lz4'
  if (poolRoot) {
    options.pmemPath = path.join(poolRoot, name)
    options.pmemBudget = 8 << 20
  }
  return { dir, options }
}

// Databases the factory made, with their files.
let made = []

function factory (options) {
  const { dir, options: engine } = location()
  const db = new JigsawLevel(dir, { ...engine, ...options })
  made.push({ db, files: [dir, engine.pmemPath].filter(Boolean) })
  return db
}

// Deletes the files of databases that an earlier test made and closed:
// abstract-level's suite makes about a thousand databases and deletes none,
// and in pmem and hybrid mode each pool holds its size in memory.
function sweep () {
  made = made.filter(({ db, files }) => {
    if (db.status !== 'closed') return true
    for (const f of files) fs.rmSync(f, { recursive: true, force: true })
    return false
  })
}

// tape's test(), sweeping before each test.
function sweepingTest (test) {
  return function (...args) {
    const i = args.findIndex((a) => typeof a === 'function')
    if (i >= 0) {
      const fn = args[i]
      args[i] = function (t) {
        sweep()
        return fn.call(this, t)
      }
    }
    return test(...args)
  }
}

function cleanup () {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true })
}

module.exports = { mode, factory, location, cleanup, sweepingTest }
