'use strict'
// npm test: jigsaw-level's own tests and abstract-level's suite, in pmem,
// hybrid and disk mode ($JIGSAW_TEST_MODES, comma-separated, picks some),
// each in a process of its own, $JIGSAW_JOBS of them at once (default: the
// number of CPUs); their output in a fixed order, then one closing line for
// all of them.
const { spawn } = require('child_process')
const os = require('os')
const path = require('path')

const modes = (process.env.JIGSAW_TEST_MODES || 'pmem,hybrid,disk').split(',')
const files = ['jigsaw-level-test.js', 'abstract-level-test.js']
const jobs = Math.max(1, Number(process.env.JIGSAW_JOBS) || os.cpus().length)

function run (file, mode) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, file)], {
      env: { ...process.env, JIGSAW_TEST_MODE: mode }
    })
    const stdout = []
    const stderr = []
    child.stdout.on('data', (chunk) => stdout.push(chunk))
    child.stderr.on('data', (chunk) => stderr.push(chunk))
    child.on('close', (status, signal) => {
      resolve({ file, mode, status, signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') })
    })
  })
}

// Counted by test (tape's "# name" lines), not by assertion: a test fails
// if any of its assertions does; a run that crashed or ended early counts
// as a failure too.
function count (run) {
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
  const fail = failed.size + (run.status !== 0 && failed.size === 0 ? 1 : 0)
  return { pass: names.length - failed.size, fail }
}

async function main () {
  const todo = []
  for (const mode of modes) for (const file of files) todo.push({ file, mode })
  const results = new Array(todo.length)
  let next = 0
  async function worker () {
    while (next < todo.length) {
      const i = next++
      results[i] = await run(todo[i].file, todo[i].mode)
    }
  }
  await Promise.all(Array.from({ length: Math.min(jobs, todo.length) }, worker))
  let pass = 0
  let fail = 0
  for (const r of results) {
    console.log(`# ${r.file} in ${r.mode} mode`)
    process.stdout.write(r.stdout)
    process.stderr.write(r.stderr)
    const c = count(r)
    pass += c.pass
    fail += c.fail
    console.log(`# ${r.file} in ${r.mode} mode: exit ${r.status}${r.signal ? ' (' + r.signal + ')' : ''}`)
  }
  console.log(`jigsaw-level: ${pass} passed, ${fail} failed`)
  process.exitCode = fail === 0 ? 0 : 1
}

main()
