// Drizzle ORM columns for PostgreSQL whose values idforge makes when a row is inserted.
import type { HasDefault, HasRuntimeDefault } from 'drizzle-orm'
import type {
  ConvertCustomConfig,
  PgBigInt64BuilderInitial,
  PgCustomColumnBuilder,
  PgUUIDBuilderInitial,
  PgVarcharBuilderInitial,
} from 'drizzle-orm/pg-core'
import type { ObjectId } from '../index'

/** What makes a snowflake column's ids: a `Snowflake`, or anything with `next(): bigint`. */
export interface BigIntIds {
  next(): bigint
}

/** A column whose default idforge computes at insert time (Drizzle's `$defaultFn`). */
type Defaulted<T extends import('drizzle-orm').ColumnBuilderBase> = HasRuntimeDefault<HasDefault<T>>

/**
 * A `bigint` column (mode `bigint`) whose default is `ids.next()`: the service's `Snowflake`
 * (its node id is yours to choose). Throws `IDFORGE_INVALID_ARGUMENT` without a generator.
 */
export declare function snowflake<N extends string>(name: N, ids: BigIntIds): Defaulted<PgBigInt64BuilderInitial<N>>
/** A `uuid` column whose default is a fresh UUIDv7 (the process-wide generator). */
export declare function uuid7<N extends string>(name: N): Defaulted<PgUUIDBuilderInitial<N>>
/** A `varchar(26)` column whose default is a fresh ULID (the process-wide generator). */
export declare function ulid<N extends string>(name: N): Defaulted<PgVarcharBuilderInitial<N, [string, ...string[]], 26>>
/** A `bytea` column of `ObjectId`s (12 bytes) whose default is a fresh ObjectId. */
export declare function objectId<N extends string>(
  name: N,
): Defaulted<PgCustomColumnBuilder<ConvertCustomConfig<N, { data: ObjectId; driverData: Buffer }>>>
