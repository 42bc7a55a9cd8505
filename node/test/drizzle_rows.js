'use strict'
// What the Drizzle tests of both databases check (drizzle.test.js, drizzle_sqlite.test.js): 8
// async workers insert 10,000 rows whose ids the columns make; the rows come back distinct, in
// each worker's creation order under every id column's ORDER BY, and the same through JSON.
const assert = require('node:assert/strict')
const { ObjectId, Snowflake, json } = require('idforge')

const WORKERS = 8
const PER_WORKER = 1250

/**
 * The `orders` table both tests fill, on `table` (`pgTable` or `sqliteTable`) with `ids`, the
 * package's column builders for that database: an id of each kind, made by idforge.
 */
function ordersTable(table, core, ids) {
  const snowflakes = new Snowflake({ layout: 'twitter', nodeId: 3 })
  return table('orders', {
    id: ids.snowflake('id', snowflakes).primaryKey(),
    worker: core.integer('worker').notNull(),
    ref: ids.uuid7('ref').notNull(),
    ulid: ids.ulid('ulid').notNull(),
    oid: ids.objectId('oid').notNull(),
  })
}

/** Inserts the rows (only `worker` given) and checks them; returns every row made. */
async function tenThousandRows(orm, orders, asc) {
  const made = await Promise.all(
    Array.from({ length: WORKERS }, async (_, worker) => {
      const rows = []
      for (let i = 0; i < PER_WORKER; i++) {
        const [row] = await orm.insert(orders).values({ worker }).returning()
        rows.push(row)
      }
      return rows
    }),
  )
  const all = made.flat()
  assert.equal(new Set(all.map((r) => r.id)).size, WORKERS * PER_WORKER, 'duplicate ids')
  assert.ok(all.every((r) => typeof r.id === 'bigint' && r.oid instanceof ObjectId))
  assert.ok(all.some((r) => r.id > 2n ** 53n), 'ids past what a number holds')
  const fields = (r) => [r.id, r.ref, r.ulid, r.oid.toHexString()]
  for (const column of ['id', 'ref', 'ulid', 'oid']) {
    const rows = await orm.select().from(orders).orderBy(asc(orders[column]))
    assert.equal(rows.length, WORKERS * PER_WORKER)
    for (let w = 0; w < WORKERS; w++) {
      const mine = rows.filter((r) => Number(r.worker) === w)
      assert.deepEqual(mine.map(fields), made[w].map(fields), `worker ${w}, ORDER BY ${column}`)
    }
  }
  // Through JSON and back: bigint ids as decimal text, ObjectIds as hex.
  const back = json.parse(json.stringify(all), ['id'])
  assert.deepEqual(
    back.map((r) => [r.id, r.ref, r.ulid, r.oid]),
    all.map(fields),
  )
  return all
}

module.exports = { ordersTable, tenThousandRows }
