'use strict'
// Holds an flock(2) on a file from a child process (util-linux `flock`), as a stuck process
// would: a file:// segment source blocks on it, which makes a real slow source for the tests.
const { spawn } = require('node:child_process')

/** Resolves once the lock is held; `release()` kills the holder (by PID). */
function holdLock(path, maxMs) {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', [path, '-c', `echo locked; sleep ${maxMs / 1000}`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    child.once('error', reject)
    child.stdout.once('data', () =>
      resolve({
        release() {
          if (child.exitCode === null) process.kill(child.pid, 'SIGKILL')
        },
      }),
    )
  })
}

/** The tests that hold a lock skip where flock(1) does not exist: Windows. */
const lockSkip = process.platform === 'win32' && "holds a file's lock with util-linux flock(1), which Windows lacks"

module.exports = { holdLock, lockSkip }
