'use strict'
// abstract-level's own test suite (the level ecosystem's contract) against
// jigsaw-level, in the mode $JIGSAW_TEST_MODE names.
const test = require('tape')
const suite = require('abstract-level/test')
const common = require('./common')

test.onFinish(common.cleanup)
suite({ test: common.sweepingTest(test), factory: common.factory })
