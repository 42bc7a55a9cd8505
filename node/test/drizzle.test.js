'use strict'
// idforge/drizzle/pg: a Drizzle table whose ids idforge makes at insert time, in the services'
// PostgreSQL. 8 async workers insert 10,000 rows, which come back distinct, in each worker's
// creation order under every id column's ORDER BY, with the documented column types, and the
// same after a JSON round trip (json.stringify / json.parse for the bigint ids).
const test = require('node:test')
const assert = require('node:assert/strict')
const { needed, throwsCode } = require('./helpers.js')
const { ordersTable, tenThousandRows } = require('./drizzle_rows.js')

/** drizzle-orm and pg (development dependencies, optional peers of the package), or a skip. */
function frameworks(t) {
  try {
    return {
      pg: require('pg'),
      drizzle: require('drizzle-orm/node-postgres').drizzle,
      core: require('drizzle-orm/pg-core'),
      orm: require('drizzle-orm'),
      ids: require('idforge/drizzle/pg'),
    }
  } catch (e) {
    assert.ok(!process.env.IDFORGE_REQUIRE_FRAMEWORKS, `drizzle-orm or pg is missing: ${e.message}`)
    t.skip('drizzle-orm or pg is not installed (npm ci in node/ installs both)')
    return undefined
  }
}

test('drizzle: 10,000 rows from 8 workers in PostgreSQL, ids made by idforge', async (t) => {
  const url = needed(t, 'IDFORGE_TEST_POSTGRES_URL')
  const f = url && frameworks(t)
  if (!f) return
  const schema = `idforge_drizzle_${process.pid}`
  const admin = new f.pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`CREATE SCHEMA ${schema}`)
  const pool = new f.pg.Pool({ connectionString: url, max: 8, options: `-c search_path=${schema}` })
  try {
    const orders = ordersTable(f.core.pgTable, f.core, f.ids)
    await pool.query(
      'CREATE TABLE orders (id bigint PRIMARY KEY, worker integer NOT NULL, ref uuid NOT NULL, ' +
        'ulid varchar(26) NOT NULL, oid bytea NOT NULL)',
    )
    await tenThousandRows(f.drizzle(pool), orders, f.orm.asc)
    const { rows: types } = await pool.query(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'orders' ORDER BY ordinal_position",
      [schema],
    )
    assert.deepEqual(
      types.map((r) => [r.column_name, r.data_type]),
      [
        ['id', 'bigint'],
        ['worker', 'integer'],
        ['ref', 'uuid'],
        ['ulid', 'character varying'],
        ['oid', 'bytea'],
      ],
    )
  } finally {
    await pool.end()
    await admin.query(`DROP SCHEMA ${schema} CASCADE`)
    await admin.end()
  }
})

test('drizzle: a snowflake column needs its generator', (t) => {
  const f = frameworks(t)
  if (!f) return
  throwsCode(() => f.ids.snowflake('id'), 'INVALID_ARGUMENT')
  throwsCode(() => f.ids.snowflake('id', {}), 'INVALID_ARGUMENT')
})
