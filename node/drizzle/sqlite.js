'use strict'
// Drizzle ORM columns for SQLite whose values idforge makes when a row is inserted
// (`idforge/drizzle/sqlite`). drizzle-orm is an optional peer dependency, loaded (by ./common.js)
// only when this file is required.
const idforge = require('../index.js')
const { ErrorCode, idforgeError } = require('../errors.js')
const { loadCore, needGenerator } = require('./common.js')
const core = loadCore('sqlite')

// A snowflake as SQLite's INTEGER (64-bit), read back as a bigint. A driver that hands over a
// JavaScript number past 2^53 has already lost digits: that is an error, never a changed id.
const int64 = core.customType({
  dataType: () => 'integer',
  toDriver: (value) => value,
  fromDriver: (value) => {
    if (typeof value === 'bigint') return value
    if (Number.isSafeInteger(value)) return BigInt(value)
    throw idforgeError(
      ErrorCode.INVALID_ARGUMENT,
      `the SQLite driver read an id as the number ${value}, which has lost digits: read integers as ` +
        "bigints (node:sqlite's setReadBigInts(true), better-sqlite3's safeIntegers())",
    )
  },
})

// An ObjectId as its 12 bytes (BLOB): sorts by creation, and reads back as an ObjectId.
const objectIdBlob = core.customType({
  dataType: () => 'blob',
  toDriver: (value) => new idforge.ObjectId(value).toBytes(),
  fromDriver: (value) => idforge.ObjectId.fromBytes(value),
})

/** An `integer` column of bigint ids whose default is `ids.next()` (your `Snowflake`). */
function snowflake(name, ids) {
  const gen = needGenerator(ids, name)
  return int64(name).$defaultFn(() => gen.next())
}

/** A `text` column whose default is a fresh UUIDv7 (the process-wide generator). */
function uuid7(name) {
  return core.text(name).$defaultFn(() => idforge.uuid7())
}

/** A `text` column whose default is a fresh ULID (the process-wide generator). */
function ulid(name) {
  return core.text(name).$defaultFn(() => idforge.ulid())
}

/** A `blob` column of `ObjectId`s (12 bytes) whose default is a fresh ObjectId. */
function objectId(name) {
  return objectIdBlob(name).$defaultFn(() => new idforge.ObjectId())
}

module.exports = { snowflake, uuid7, ulid, objectId }
