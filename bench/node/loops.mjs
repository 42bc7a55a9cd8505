// The plain loop of the Node benches (the cross-check of mitata's ratios, and the figures the
// verdicts against a peer use): each case is its own `for` loop storing every id into a
// preallocated array, as a user's code would. mitata said our ObjectId was 1.45x bson's while
// such a loop measured it slower (72 against 61 ns): a loop that keeps 2 M ids pays for keeping
// them (heap growth, GC), which mitata's short batches may not show.
import { writeFileSync } from 'node:fs'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** ns per call of one round of `body` over a fresh array of n; the array is dropped on return. */
function timeLoop(body, n) {
  const out = new Array(n)
  const t0 = process.hrtime.bigint()
  body(out)
  return Number(process.hrtime.bigint() - t0) / n
}

/**
 * Best of `rounds` rounds per case of `cases` ([name, body(out)]); each round runs every case
 * once, in turn, so drift in the machine's speed falls on all of them alike. Returns
 * [{ name, ns }].
 */
export function plainLoops(cases, n, rounds) {
  // A full collection before each run frees the last one's ids, so no run pays for another's
  // garbage. Not `node --expose-gc`: mitata would then collect around its benches too and its
  // figures would change; a flag set now reaches only the new context's gc().
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc')
  const best = new Map(cases.map(([name]) => [name, Infinity]))
  for (let round = 0; round < rounds; round++) {
    for (const [name, body] of cases) {
      gc()
      best.set(name, Math.min(best.get(name), timeLoop(body, n)))
    }
  }
  return [...best].map(([name, ns]) => ({ name, ns }))
}

/**
 * Runs the plain loops after mitata's `rows` ([{ name, ns }]), prints them, and writes both to
 * `jsonPath` when given (what bench/report/rust.py reads).
 */
export function runLoopsAndWrite(rows, cases, n, rounds, jsonPath) {
  const loops = plainLoops(cases, n, rounds)
  console.log(`\nplain loop, best of ${rounds} x ${n} calls, every id kept:`)
  for (const { name, ns } of loops) console.log(`  ${name.padEnd(40)} ${ns.toFixed(1)} ns/call`)
  if (jsonPath !== undefined) {
    const loop = { n, rounds }
    writeFileSync(jsonPath, JSON.stringify({ node: process.version, rows, loop, loops }, null, 2))
  }
}
