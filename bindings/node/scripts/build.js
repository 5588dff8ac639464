'use strict'
// `npm install`'s build: the addon (CMake target jigsaw_level, from the
// repository this folder belongs to) in a Release tree under build/, copied
// to build/jigsaw_level.node. Skipped when $JIGSAW_LEVEL_ADDON names one
// already built. $JIGSAW_JOBS sets the parallelism.
const { execFileSync } = require('child_process')
const fs = require('fs')
const os = require('os')
const path = require('path')

if (process.env.JIGSAW_LEVEL_ADDON) process.exit(0)

const here = path.join(__dirname, '..')
const root = path.join(here, '..', '..')
const tree = path.join(here, 'build', 'cmake')
const jobs = process.env.JIGSAW_JOBS || String(os.cpus().length)
const run = (args) => execFileSync('cmake', args, { stdio: 'inherit' })

run(['-S', root, '-B', tree, '-DCMAKE_BUILD_TYPE=Release', '-DJIGSAW_BUILD_NODE=ON', '-DJIGSAW_BUILD_TESTS=OFF',
  '-DJIGSAW_BUILD_BENCH=OFF', '-DJIGSAW_BUILD_TOOLS=OFF', '-DJIGSAW_INSTALL=OFF'])
run(['--build', tree, '--target', 'jigsaw_level', '-j', jobs])
fs.copyFileSync(path.join(tree, 'bindings', 'node', 'jigsaw_level.node'), path.join(here, 'build', 'jigsaw_level.node'))
