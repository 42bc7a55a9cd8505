'use strict'
// Shared by the tests: the vectors of core/testdata and an assertion on error codes.
const assert = require('node:assert/strict')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')

const TESTDATA = join(__dirname, '..', '..', 'core', 'testdata')

/** A JSON file of core/testdata. */
function load(name) {
  return JSON.parse(readFileSync(join(TESTDATA, name), 'utf8'))
}

/** Asserts that `fn` throws an Error whose code is IDFORGE_<name>. */
function throwsCode(fn, name, words) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof Error, `not an Error: ${e}`)
    assert.equal(e.code, `IDFORGE_${name}`, e.message)
    if (words) assert.match(e.message.toLowerCase(), new RegExp(words))
    return true
  })
}

/** Asserts that `promise` rejects with an Error whose code is IDFORGE_<name>. */
async function rejectsCode(promise, name) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof Error, `not an Error: ${e}`)
    assert.equal(e.code, `IDFORGE_${name}`, e.message)
    return true
  })
}

module.exports = { load, throwsCode, rejectsCode }
