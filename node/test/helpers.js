'use strict'
// Shared by the tests: the vectors of core/testdata, assertions on error codes, and the
// environment a test needs (skipped without it, unless CI requires it).
const assert = require('node:assert/strict')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')

const TESTDATA = join(__dirname, '..', '..', 'core', 'testdata')

/** A JSON file of core/testdata. */
function load(name) {
  return JSON.parse(readFileSync(join(TESTDATA, name), 'utf8'))
}

// The number of each code's name, from errors.json (the contract every language shares).
const STATUS = new Map(load('errors.json').errors.map((r) => [r.name, r.code]))

/** Asserts that `e` is idforge's error `name`: `code` IDFORGE_<name>, `status` its number. */
function assertIdforgeError(e, name) {
  assert.ok(e instanceof Error, `not an Error: ${e}`)
  assert.equal(e.code, `IDFORGE_${name}`, e.message)
  assert.ok(STATUS.has(name), `${name} is not a code of errors.json`)
  assert.equal(e.status, STATUS.get(name), `status of ${e.code}: ${e.message}`)
}

/** Asserts that `fn` throws an Error whose code is IDFORGE_<name> (and status its number). */
function throwsCode(fn, name, words) {
  assert.throws(fn, (e) => {
    assertIdforgeError(e, name)
    if (words) assert.match(e.message.toLowerCase(), new RegExp(words))
    return true
  })
}

/** Asserts that `promise` rejects with an Error whose code is IDFORGE_<name> (status too). */
async function rejectsCode(promise, name) {
  await assert.rejects(promise, (e) => {
    assertIdforgeError(e, name)
    return true
  })
}

/**
 * An environment variable a test needs, or undefined (the test skips) when it is not set and
 * not required; with IDFORGE_REQUIRE_SERVICES (CI) a missing one fails the test instead.
 */
function needed(t, name) {
  const value = process.env[name]
  if (value) return value
  assert.ok(!process.env.IDFORGE_REQUIRE_SERVICES, `${name} is not set but IDFORGE_REQUIRE_SERVICES is`)
  t.skip(`${name} is not set (ci/test.sh sets it)`)
  return undefined
}

/**
 * How much slower than an idle machine this one runs (IDFORGE_TEST_SLOWDOWN, which ci/test.sh
 * measures before each step; more under emulation), between 1 and 50: the few time bounds the
 * tests keep are multiplied by it.
 */
function slowdown() {
  const f = Number(process.env.IDFORGE_TEST_SLOWDOWN)
  return Number.isFinite(f) ? Math.min(Math.max(f, 1), 50) : 1
}

module.exports = { load, throwsCode, rejectsCode, needed, slowdown }
