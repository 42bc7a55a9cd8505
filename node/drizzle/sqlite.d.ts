// Drizzle ORM columns for SQLite whose values idforge makes when a row is inserted.
import type { ColumnBuilderBase, HasDefault, HasRuntimeDefault } from 'drizzle-orm'
import type { ConvertCustomConfig, SQLiteCustomColumnBuilder, SQLiteTextBuilderInitial } from 'drizzle-orm/sqlite-core'
import type { ObjectId } from '../index'
import type { BigIntIds } from './pg'

/** A column whose default idforge computes at insert time (Drizzle's `$defaultFn`). */
type Defaulted<T extends ColumnBuilderBase> = HasRuntimeDefault<HasDefault<T>>

/**
 * An `integer` column of bigint ids whose default is `ids.next()` (your `Snowflake`). The driver
 * must read integers as bigints (node:sqlite's `setReadBigInts(true)`); a lossy number read back
 * throws `IDFORGE_INVALID_ARGUMENT`.
 */
export declare function snowflake<N extends string>(
  name: N,
  ids: BigIntIds,
): Defaulted<SQLiteCustomColumnBuilder<ConvertCustomConfig<N, { data: bigint; driverData: bigint }>>>
/** A `text` column whose default is a fresh UUIDv7 (the process-wide generator). */
export declare function uuid7<N extends string>(name: N): Defaulted<SQLiteTextBuilderInitial<N, [string, ...string[]], undefined>>
/** A `text` column whose default is a fresh ULID (the process-wide generator). */
export declare function ulid<N extends string>(name: N): Defaulted<SQLiteTextBuilderInitial<N, [string, ...string[]], undefined>>
/** A `blob` column of `ObjectId`s (12 bytes) whose default is a fresh ObjectId. */
export declare function objectId<N extends string>(
  name: N,
): Defaulted<SQLiteCustomColumnBuilder<ConvertCustomConfig<N, { data: ObjectId; driverData: Uint8Array }>>>
