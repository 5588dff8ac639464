'use strict'
// Loads the native addon: $JIGSAW_LEVEL_ADDON if set (a jigsaw_level.node
// built elsewhere, e.g. in the repository's CMake tree), else the one
// `npm install` built (scripts/build.js).
const path = require('path')

const file = process.env.JIGSAW_LEVEL_ADDON || path.join(__dirname, '..', 'build', 'jigsaw_level.node')
module.exports = require(path.resolve(file))
