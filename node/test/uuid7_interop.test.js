'use strict'
// Interop of UUIDv7 and ULID with the real npm packages: uuid (validate, version, parse,
// stringify, v7) and ulid (decodeTime, isValid, monotonic ids).
const test = require('node:test')
const assert = require('node:assert/strict')
const uuidPkg = require('uuid')
const ulidPkg = require('ulid')
const {
  Ulids,
  Uuid7s,
  parseUlid,
  parseUuid7,
  stringifyUuid7,
  ulidFields,
  ulidToUuid,
  uuid7,
  uuid7Bytes,
  uuid7Fields,
  uuidToUlid,
} = require('idforge')

test('the uuid package validates ours as version 7 and parses them to our bytes', () => {
  for (const u of [uuid7(), ...new Uuid7s().nextMany(1000)]) {
    assert.ok(uuidPkg.validate(u), u)
    assert.equal(uuidPkg.version(u), 7)
    assert.deepEqual(Buffer.from(uuidPkg.parse(u)), parseUuid7(u))
    assert.equal(uuidPkg.stringify(uuid7Bytes(Buffer.alloc(16))).length, 36)
  }
  const bytes = uuid7Bytes()
  assert.equal(uuidPkg.stringify(bytes), stringifyUuid7(bytes))
})

test('we read the uuid package v7 ids, with its time', () => {
  for (let i = 0; i < 1000; i++) {
    const before = Date.now()
    const theirs = uuidPkg.v7()
    assert.equal(stringifyUuid7(parseUuid7(theirs)), theirs)
    const t = uuid7Fields(theirs).timeMs
    assert.ok(t >= before && t <= Date.now())
    assert.deepEqual(parseUuid7(theirs), Buffer.from(uuidPkg.parse(theirs)))
  }
  // Its v4 is no UUIDv7.
  assert.throws(() => parseUuid7(uuidPkg.v4()), (e) => e.code === 'IDFORGE_INVALID_UUID')
})

test('the ulid package decodes our times and validates our ids', () => {
  const texts = new Ulids().nextMany(1000)
  for (const text of texts) {
    assert.ok(ulidPkg.isValid(text), text)
    assert.equal(ulidPkg.decodeTime(text), ulidFields(text).timeMs)
    assert.equal(ulidPkg.ulidToUUID(text).toLowerCase(), ulidToUuid(text))
  }
  const u = uuid7()
  assert.equal(ulidPkg.decodeTime(uuidToUlid(u)), uuid7Fields(u).timeMs)
  assert.equal(ulidPkg.uuidToULID(u), uuidToUlid(u))
})

test('we read the ulid package ids, monotonic ones in their order', () => {
  const next = ulidPkg.monotonicFactory()
  const theirs = Array.from({ length: 1000 }, () => next())
  for (const text of theirs) {
    assert.equal(parseUlid(text), text)
    assert.equal(parseUlid(text.toLowerCase()), text)
    assert.equal(ulidFields(text).timeMs, ulidPkg.decodeTime(text))
  }
  const sorted = [...theirs].sort((a, b) => (ulidToUuid(a) < ulidToUuid(b) ? -1 : 1))
  assert.deepEqual(sorted, theirs)
})
