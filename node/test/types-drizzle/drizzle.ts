// Compiled by `tsc -p test/types-drizzle` (in `npm test`): idforge/drizzle/pg's columns in a
// Drizzle table, and the row types Drizzle infers from them. Not run. skipLibCheck is on, as
// Drizzle's users have it (its declarations name every driver), so the checks below are exact
// types: a declaration that failed to resolve would be `any` and fail them.
import { pgTable, integer } from 'drizzle-orm/pg-core'
import { ObjectId, Snowflake } from 'idforge'
import { objectId, snowflake, ulid, uuid7 } from 'idforge/drizzle/pg'

const ids = new Snowflake({ layout: 'twitter', nodeId: 3 })
export const orders = pgTable('orders', {
  id: snowflake('id', ids).primaryKey(),
  worker: integer('worker').notNull(),
  ref: uuid7('ref').notNull(),
  ulid: ulid('ulid').notNull(),
  oid: objectId('oid').notNull(),
})

type Exact<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
type Row = typeof orders.$inferSelect
type Insert = typeof orders.$inferInsert
type Required<T> = { [K in keyof T]-?: undefined extends T[K] ? never : K }[keyof T]

const idIsBigint: Exact<Row['id'], bigint> = true
const refIsString: Exact<Row['ref'], string> = true
const ulidIsString: Exact<Row['ulid'], string> = true
const oidIsObjectId: Exact<Row['oid'], ObjectId> = true
// Every id column has a default: an insert needs only the worker.
const onlyWorkerRequired: Exact<Required<Insert>, 'worker'> = true
const insert: Insert = { worker: 1 }
export { idIsBigint, refIsString, ulidIsString, oidIsObjectId, onlyWorkerRequired, insert }

// The SQLite columns: the same row types.
import { integer as sqliteInteger, sqliteTable } from 'drizzle-orm/sqlite-core'
import * as lite from 'idforge/drizzle/sqlite'

export const liteOrders = sqliteTable('orders', {
  id: lite.snowflake('id', ids).primaryKey(),
  worker: sqliteInteger('worker').notNull(),
  ref: lite.uuid7('ref').notNull(),
  ulid: lite.ulid('ulid').notNull(),
  oid: lite.objectId('oid').notNull(),
})
type LiteRow = typeof liteOrders.$inferSelect
type LiteInsert = typeof liteOrders.$inferInsert
const liteIdIsBigint: Exact<LiteRow['id'], bigint> = true
const liteRefIsString: Exact<LiteRow['ref'], string> = true
const liteOidIsObjectId: Exact<LiteRow['oid'], ObjectId> = true
const liteOnlyWorkerRequired: Exact<Required<LiteInsert>, 'worker'> = true
export { liteIdIsBigint, liteRefIsString, liteOidIsObjectId, liteOnlyWorkerRequired }
