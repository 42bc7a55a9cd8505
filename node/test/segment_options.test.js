'use strict'
// The shared vectors of core/testdata/segment_options.json, through the Node API: the options
// given (camelCase; undefined is "not given"), and the options in effect or the exact message.
const test = require('node:test')
const assert = require('node:assert/strict')
const { Segments } = require('idforge')
const { load, throwsCode } = require('./helpers.js')

const VECTORS = load('segment_options.json')
const CAMEL = {
  step: 'step',
  max_step: 'maxStep',
  dynamic_step: 'dynamicStep',
  target_ms: 'targetMs',
  prefetch_pct: 'prefetchPct',
  timeout_ms: 'timeoutMs',
}

/** A row's options under Node's names. */
function camel(options) {
  return Object.fromEntries(Object.entries(options).map(([k, v]) => [CAMEL[k], v]))
}

test('given options resolve to the options in effect', () => {
  for (const row of VECTORS.valid) {
    assert.deepEqual(new Segments('memory:', 't', camel(row.given)).options(), camel(row.resolved), JSON.stringify(row.given))
  }
})

test('options out of bounds are refused with one message', () => {
  for (const row of [...VECTORS.invalid, ...VECTORS.invalid_negative]) {
    throwsCode(() => new Segments('memory:', 't', camel(row.given)), row.error)
    assert.throws(() => new Segments('memory:', 't', camel(row.given)), { message: `invalid argument: ${row.message}` })
  }
})

test('undefined is not given; a fraction is no integer', () => {
  const none = Object.fromEntries(Object.values(CAMEL).map((k) => [k, undefined]))
  assert.deepEqual(new Segments('memory:', 't', none).options(), camel(VECTORS.defaults))
  assert.deepEqual(new Segments('memory:', 't').options(), camel(VECTORS.defaults))
  throwsCode(() => new Segments('memory:', 't', { step: 1.5 }), 'INVALID_ARGUMENT', 'integers')
  throwsCode(() => new Segments('memory:', 't', { timeoutMs: Infinity }), 'INVALID_ARGUMENT', 'integers')
})
