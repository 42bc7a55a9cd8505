'use strict'
// JSON with 64-bit ids: idforge.json writes bigints as decimal text and reads named keys back
// as bigints (core/testdata/json_ids.json: what every binding writes), so an id past 2^53
// survives, where plain JSON.parse changes its digits.
const test = require('node:test')
const assert = require('node:assert/strict')
const { json, Snowflake, ObjectId } = require('idforge')
const { load, throwsCode } = require('./helpers.js')

const VECTORS = load('json_ids.json')

test('the shared vectors: written and read back exactly', () => {
  for (const c of VECTORS.cases) {
    assert.equal(json.stringify({ id: BigInt(c.id) }), c.json)
    assert.equal(json.parse(c.json, ['id']).id, BigInt(c.id))
    assert.equal(json.parseId(c.id), BigInt(c.id))
  }
  for (const text of VECTORS.invalid) {
    throwsCode(() => json.parseId(text), 'INVALID_DECIMAL')
    throwsCode(() => json.parse(JSON.stringify({ id: text }), ['id']), 'INVALID_DECIMAL')
  }
})

test('a snowflake past 2^53 survives a round trip; plain JSON loses it', () => {
  const g = new Snowflake({ layout: 'twitter', nodeId: 3 })
  const id = g.next()
  assert.ok(id > 2n ** 53n)
  const order = { id, parent: g.next(), items: [g.next(), g.next()], oid: new ObjectId(), note: 'x', n: 5 }
  const text = json.stringify(order)
  const back = json.parse(text, ['id', 'parent', 'items'])
  assert.deepEqual(back, { ...order, oid: order.oid.toHexString(), items: order.items })
  // The trap it avoids: an id as a JSON number comes back as another number (an odd one past
  // 2^53 has no double of its own).
  const odd = id | 1n
  assert.notEqual(BigInt(JSON.parse(`{"id":${odd}}`).id), odd)
  assert.equal(json.parse(json.stringify({ odd }), ['odd']).odd, odd)
  // Keys not named stay text; numbers stay numbers.
  assert.equal(typeof json.parse(text, ['id']).parent, 'string')
  assert.equal(json.parse('{"id":7}', ['id']).id, 7)
  // As JSON.stringify's and JSON.parse's own arguments.
  assert.equal(JSON.stringify({ id }, json.replacer), `{"id":"${id}"}`)
  assert.equal(JSON.parse(`{"id":"${id}"}`, json.reviver('id')).id, id)
})
