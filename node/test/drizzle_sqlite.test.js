'use strict'
// idforge/drizzle/sqlite: a Drizzle table whose ids idforge makes at insert time, in SQLite through
// node:sqlite (Node 22.5+; the node step runs this file with Node 22 from the npm registry) and
// Drizzle's sqlite-proxy driver. 8 async workers insert 10,000 rows, which come back distinct,
// in each worker's creation order under every id column's ORDER BY, with the documented storage
// classes, and the same after a JSON round trip.
const test = require('node:test')
const assert = require('node:assert/strict')
const { throwsCode } = require('./helpers.js')
const { ordersTable, tenThousandRows } = require('./drizzle_rows.js')

/** node:sqlite, drizzle-orm and the helper, or a skip. */
function frameworks(t) {
  let sqlite
  try {
    sqlite = require('node:sqlite')
  } catch {
    assert.ok(!process.env.IDFORGE_REQUIRE_NODE_SQLITE, `node:sqlite is missing in Node ${process.version}`)
    t.skip(`node:sqlite needs Node 22.5 or later, not ${process.version} (the node step runs this file with Node 22)`)
    return undefined
  }
  try {
    return {
      sqlite,
      proxy: require('drizzle-orm/sqlite-proxy').drizzle,
      core: require('drizzle-orm/sqlite-core'),
      orm: require('drizzle-orm'),
      ids: require('idforge/drizzle/sqlite'),
    }
  } catch (e) {
    assert.ok(!process.env.IDFORGE_REQUIRE_FRAMEWORKS, `drizzle-orm is missing: ${e.message}`)
    t.skip('drizzle-orm is not installed (npm ci in node/ installs it)')
    return undefined
  }
}

/** Drizzle's sqlite-proxy callback over one node:sqlite database, integers read as bigints. */
function proxyOf(db) {
  return async (sql, params, method) => {
    const stmt = db.prepare(sql)
    stmt.setReadBigInts(true)
    if (method === 'run') {
      stmt.run(...params)
      return { rows: [] }
    }
    stmt.setReturnArrays?.(true)
    const rows = stmt.all(...params).map((r) => (Array.isArray(r) ? r : Object.values(r)))
    return { rows: method === 'get' ? rows[0] : rows }
  }
}

test('drizzle sqlite: 10,000 rows from 8 workers, ids made by idforge', async (t) => {
  const f = frameworks(t)
  if (!f) return
  const db = new f.sqlite.DatabaseSync(':memory:')
  const orders = ordersTable(f.core.sqliteTable, f.core, f.ids)
  db.exec(
    'CREATE TABLE orders (id integer PRIMARY KEY, worker integer NOT NULL, ref text NOT NULL, ' +
      'ulid text NOT NULL, oid blob NOT NULL)',
  )
  await tenThousandRows(f.proxy(proxyOf(db)), orders, f.orm.asc)
  // What SQLite stored, value by value.
  const kinds = db
    .prepare('SELECT DISTINCT typeof(id) AS id, typeof(ref) AS ref, typeof(ulid) AS ulid, typeof(oid) AS oid FROM orders')
    .all()
  assert.deepEqual(kinds.map((k) => ({ ...k })), [{ id: 'integer', ref: 'text', ulid: 'text', oid: 'blob' }])
  // node:sqlite itself refuses to read a big id as a number; a driver that would hand one over
  // (rounded) gets an error from the column, never a changed id.
  assert.throws(() => db.prepare('SELECT max(id) AS id FROM orders').get(), /too large/)
  assert.equal(orders.id.mapFromDriverValue(42), 42n)
  throwsCode(() => orders.id.mapFromDriverValue(2 ** 60), 'INVALID_ARGUMENT')
  db.close()
})

test('drizzle sqlite: a snowflake column needs its generator', (t) => {
  const f = frameworks(t)
  if (!f) return
  throwsCode(() => f.ids.snowflake('id'), 'INVALID_ARGUMENT')
})
