'use strict'
// Drizzle ORM columns for PostgreSQL whose values idforge makes when a row is inserted
// (`idforge/drizzle/pg`). drizzle-orm is an optional peer dependency, loaded (by ./common.js)
// only when this file is required.
const idforge = require('../index.js')
const { loadCore, needGenerator } = require('./common.js')
const { bigint, customType, uuid, varchar } = loadCore('pg')

// An ObjectId as its 12 bytes (bytea): sorts by creation, and reads back as an ObjectId.
const objectIdBytea = customType({
  dataType: () => 'bytea',
  toDriver: (value) => new idforge.ObjectId(value).toBytes(),
  fromDriver: (value) => idforge.ObjectId.fromBytes(value),
})

/**
 * A `bigint` column (mode `bigint`) whose default is `ids.next()`: pass the service's
 * `Snowflake` (its node id is yours to choose) or a `Segments`-like object with `next()`.
 */
function snowflake(name, ids) {
  const gen = needGenerator(ids, name)
  return bigint(name, { mode: 'bigint' }).$defaultFn(() => gen.next())
}

/** A `uuid` column whose default is a fresh UUIDv7 (the process-wide generator). */
function uuid7(name) {
  return uuid(name).$defaultFn(() => idforge.uuid7())
}

/** A `varchar(26)` column whose default is a fresh ULID (the process-wide generator). */
function ulid(name) {
  return varchar(name, { length: 26 }).$defaultFn(() => idforge.ulid())
}

/** A `bytea` column of `ObjectId`s (12 bytes) whose default is a fresh ObjectId. */
function objectId(name) {
  return objectIdBytea(name).$defaultFn(() => new idforge.ObjectId())
}

module.exports = { snowflake, uuid7, ulid, objectId }
