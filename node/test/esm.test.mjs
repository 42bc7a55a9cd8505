// The ES module face: named and default imports are the CommonJS module's objects.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import idforge, { Snowflake, ObjectId, Flake128, Segments, Layout, ErrorCode, version } from 'idforge'

const require = createRequire(import.meta.url)

test('ESM imports are the CommonJS exports', () => {
  const cjs = require('idforge')
  assert.equal(idforge, cjs)
  for (const [name, value] of Object.entries({ Snowflake, ObjectId, Flake128, Segments, Layout, ErrorCode, version })) {
    assert.equal(value, cjs[name], name)
  }
  assert.equal(typeof new Snowflake().next(), 'bigint')
  assert.equal(version(), require('../package.json').version)
})

test('ESM names every CommonJS export, UUIDv7 and ULID included', async () => {
  const cjs = require('idforge')
  const esm = await import('idforge')
  for (const name of Object.keys(cjs)) assert.equal(esm[name], cjs[name], name)
  assert.match(esm.uuid7(), /^[0-9a-f-]{36}$/)
})
