'use strict'
// describeId: any id's fields by the runtime's rules (what `idforge decode` prints).
const test = require('node:test')
const assert = require('node:assert/strict')
const { json, Snowflake, Layout, ObjectId, Flake128, describeId, idToText, uuid7, ulid, ulidToUuid } = require('idforge')

test('each kind is detected, with its fields typed', () => {
  const g = new Snowflake({ nodeId: 5 })
  const id = g.next()
  const d = describeId(String(id))
  assert.deepEqual(Object.keys(d).slice(0, 3), ['type', 'layout', 'id'])
  assert.equal(d.type, 'snowflake')
  assert.equal(d.id, String(id))
  assert.equal(d.node, 5)
  assert.equal(d.time_ms, Number(g.decode(id).timeMs))
  const oid = new ObjectId()
  assert.equal(describeId(oid.toString()).timestamp, oid.timestamp)
  const v7 = uuid7()
  const u = describeId(v7.toUpperCase())
  assert.equal(u.type, 'uuid7')
  assert.equal(u.id, v7)
  assert.equal(typeof u.rand_b, 'string')
  const l = ulid()
  assert.equal(describeId(l.toLowerCase()).uuid, ulidToUuid(l))
  const f = Flake128.compose(1_700_000_000_123, 0xabc, 7)
  assert.equal(describeId(f.toString()).worker, '000000000abc')
  // The object goes through JSON as it is.
  assert.deepEqual(JSON.parse(JSON.stringify(d)), d)
})

test('type, form and layout', () => {
  const id = 7_301_234_567_890_123_456n
  const text = idToText(id)
  assert.deepEqual(describeId(text, { form: 'base32' }), describeId(String(id)))
  assert.equal(describeId(String(id), { layout: 'discord' }).layout, 'discord')
  assert.deepEqual(describeId(String(id), { layout: Layout.preset('discord') }), describeId(String(id), { layout: 'discord' }))
  assert.equal(describeId('123', { type: 'flake128' }).type, 'flake128')
  // A layout whose ticks pass 2^53 gives a bigint, never a rounded number.
  const wide = 'epoch=0,tick=1,time=63,node=0,seq=0,unsigned'
  const big = describeId('9223372036854775807', { layout: wide })
  assert.equal(typeof big.tick, 'bigint')
  assert.equal(big.tick, 2n ** 63n - 1n)
  assert.equal(JSON.parse(json.stringify(big)).tick, String(2n ** 63n - 1n))
})

test('bad input throws the typed error, and a huge text is cut', () => {
  const codeOf = (fn) => {
    try {
      fn()
    } catch (e) {
      return e.code
    }
    return 'none'
  }
  assert.equal(codeOf(() => describeId('nope')), 'IDFORGE_INVALID_ARGUMENT')
  assert.equal(codeOf(() => describeId('1'.repeat(21))), 'IDFORGE_INVALID_DECIMAL')
  assert.equal(codeOf(() => describeId('1'.repeat(10_000_000))), 'IDFORGE_INVALID_DECIMAL')
  assert.equal(codeOf(() => describeId('x', { type: 'Snowflake' })), 'IDFORGE_INVALID_ARGUMENT')
  assert.equal(codeOf(() => describeId('x', { type: 7 })), 'IDFORGE_INVALID_ARGUMENT')
  assert.equal(codeOf(() => describeId('x', { form: 'hex' })), 'IDFORGE_INVALID_ARGUMENT')
  assert.equal(codeOf(() => describeId('1', { type: 'ulid', form: 'decimal' })), 'IDFORGE_INVALID_ARGUMENT')
  assert.equal(codeOf(() => describeId(12)), 'IDFORGE_INVALID_ARGUMENT')
  assert.equal(codeOf(() => describeId('1', null)), 'IDFORGE_INVALID_ARGUMENT')
})
