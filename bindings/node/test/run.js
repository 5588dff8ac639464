'use strict'
// npm test: jigsaw-level's own tests and abstract-level's suite, in pmem,
// hybrid and disk mode ($JIGSAW_TEST_MODES, comma-separated, picks some),
// each in a process of its own; then one closing line for all of them.
const { spawnSync } = require('child_process')
const path = require('path')

const modes = (process.env.JIGSAW_TEST_MODES || 'pmem,hybrid,disk').split(',')
const files = ['jigsaw-level-test.js', 'abstract-level-test.js']
let pass = 0
let fail = 0
for (const mode of modes) {
  for (const file of files) {
    console.log(`# ${file} in ${mode} mode`)
    const run = spawnSync(process.execPath, [path.join(__dirname, file)], {
      env: { ...process.env, JIGSAW_TEST_MODE: mode },
      encoding: 'utf8',
      maxBuffer: 256 << 20
    })
    process.stdout.write(run.stdout)
    process.stderr.write(run.stderr)
    // Counted by test (tape's "# name" lines), not by assertion: a test
    // fails if any of its assertions does.
    const failed = new Set()
    const names = []
    let current = null
    for (const line of run.stdout.split('\n')) {
      if (/^# (tests|pass|fail|ok)\b/.test(line)) continue
      if (line.startsWith('# ')) {
        current = names.length
        names.push(line)
      } else if (line.startsWith('not ok') && current !== null) {
        failed.add(current)
      }
    }
    pass += names.length - failed.size
    // A run that crashed or ended early counts as a failure too.
    fail += failed.size
    if (run.status !== 0 && failed.size === 0) fail += 1
    console.log(`# ${file} in ${mode} mode: exit ${run.status}${run.signal ? ' (' + run.signal + ')' : ''}`)
  }
}
console.log(`jigsaw-level: ${pass} passed, ${fail} failed`)
process.exitCode = fail === 0 ? 0 : 1
