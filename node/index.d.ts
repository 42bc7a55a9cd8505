// Types of the public module (index.js / index.mjs). The native classes and their option and
// result types come from native.d.ts, which the napi CLI generates from bindings/node; the id
// value classes below are JavaScript, in index.js.
//
// The types use Node's (`Buffer`): the reference below loads them from `@types/node`, a
// dependency of the package, also where a project lists no `types` (TypeScript 6 loads none
// by default).
/// <reference types="node" />

export {
  Layout,
  LayoutSpec,
  Snowflake,
  SnowflakeOptions,
  SnowflakeParts,
  IdBounds,
  SegmentOptions,
  SegmentOptionsInEffect,
  SegmentStats,
  Flake128Parts,
  ErrorCodeInfo,
  Ulids,
  TimeOrderedOptions,
  Uuid7Parts,
  UlidParts,
} from './native'
export { ErrorCode, IdforgeErrorCode, IdforgeError, errorTable } from './errors'

import {
  Segments as NativeSegments,
  SegmentOptions as NativeSegmentOptions,
  Uuid7s as NativeUuid7s,
} from './native'

/**
 * Ids of one tag from a segment source, chosen by URL: `idforge://[user:pass@]host:port[,…]`
 * (the idforge server; follows `MOVED`; `?mode=any`: striped servers, any live one, ids
 * interleaved across them), `redis://[user:pass@]host:port[/db]` (`INCRBY`; a
 * Redis restart or failover can repeat a range), `postgres://…`, `mysql://…`, `sqlite://path`
 * (Leaf's `leaf_alloc` table; `?table=`, `?auto_create=false`), `file:///dir`, `memory:`.
 * Network URLs take `?timeout_ms=`.
 */
export declare class Segments extends NativeSegments {
  /** A generator whose first range has arrived: `new Segments(…)`, then `await ready()`. */
  static connect(url: string, tag: string, options?: NativeSegmentOptions | null): Promise<Segments>
}

/**
 * A MongoDB ObjectId: 4 bytes of Unix seconds, 5 random bytes per process (drawn again after a
 * fork), a 3-byte counter. Errors: `IDFORGE_INVALID_HEX`, `IDFORGE_INVALID_LENGTH`,
 * `IDFORGE_INVALID_ARGUMENT`.
 */
export declare class ObjectId {
  /**
   * A fresh ObjectId, or the one given as 24 hex digits, 12 bytes, an `ObjectId` or any object
   * with `toHexString()` (such as the `bson` package's ObjectId).
   */
  constructor(value?: string | Uint8Array | ObjectId | { toHexString(): string })
  /** A fresh ObjectId. */
  static generate(): ObjectId
  /** The ObjectId written as 24 hex digits (either case). */
  static fromHex(hex: string): ObjectId
  /** The ObjectId of these 12 bytes. */
  static fromBytes(bytes: Uint8Array): ObjectId
  /** Whether `value` is 24 hex digits, 12 bytes or an ObjectId. */
  static isValid(value: unknown): boolean
  /** 24 lower-case hex digits. */
  toHexString(): string
  /** 24 lower-case hex digits. */
  toString(): string
  /** 24 lower-case hex digits (what `JSON.stringify` writes). */
  toJSON(): string
  /** A copy of the 12 bytes. */
  toBytes(): Buffer
  /** The creation time (whole seconds). */
  getTimestamp(): Date
  /** The creation time in Unix seconds. */
  readonly timestamp: number
  /** Whether `other` (an ObjectId, hex, bytes or a bson ObjectId) is the same id. */
  equals(other: unknown): boolean
  /** -1, 0 or 1: the order of the ids' bytes (creation second first). */
  compare(other: ObjectId): number
}

/**
 * A 128-bit flake id (Boundary's flake): 64-bit Unix ms, 48-bit worker, 16-bit sequence. Errors:
 * `IDFORGE_INVALID_BASE62`, `IDFORGE_INVALID_HEX`, `IDFORGE_INVALID_LENGTH`,
 * `IDFORGE_NODE_OUT_OF_RANGE` (a worker over 48 bits), `IDFORGE_INVALID_ARGUMENT`.
 */
export declare class Flake128 {
  /**
   * A fresh id (from the process-wide generator, random worker), or the id given as 22 base62
   * characters, 32 hex digits, 16 bytes, a `bigint` or a `Flake128`.
   */
  constructor(value?: string | Uint8Array | bigint | Flake128)
  /** The id written in base62 (22 characters). */
  static fromBase62(text: string): Flake128
  /** The id written as 32 hex digits. */
  static fromHex(text: string): Flake128
  /** The id of these 16 bytes. */
  static fromBytes(bytes: Uint8Array): Flake128
  /** The id of `(time, worker, seq)`; `time` in Unix ms or a `Date`. */
  static compose(time: number | Date, worker: number | bigint, seq?: number): Flake128
  /** 22 base62 characters; they sort like the ids. */
  toBase62(): string
  /** 32 lower-case hex digits. */
  toHex(): string
  /** The UUID form (8-4-4-4-12 hex digits) of the same 128 bits. */
  toUUID(): string
  /** A copy of the 16 bytes (big-endian). */
  toBytes(): Buffer
  /** The id as a 128-bit unsigned `bigint`. */
  toBigInt(): bigint
  /** Base62. */
  toString(): string
  /** Base62 (what `JSON.stringify` writes). */
  toJSON(): string
  /** The fields. */
  decompose(): import('./native').Flake128Parts
  /** The creation time. */
  readonly time: Date
  /** Whether `other` is the same id. */
  equals(other: unknown): boolean
  /** -1, 0 or 1: the order of the ids (time first). */
  compare(other: Flake128): number
}

/** A flake-128 generator with a worker id of its own. */
export declare class Flake128Generator {
  /**
   * `worker`: `"random"` (default: 48 random bits), `"mac"` (the first MAC address), or a fixed
   * 48-bit number.
   */
  constructor(worker?: 'random' | 'mac' | number)
  /** The next id. */
  next(): Flake128
  /** Writes the next id's 16 bytes into `out`. */
  nextInto(out: Uint8Array): void
  /** The worker id. */
  get worker(): number
}

/**
 * UUIDv7s (RFC 9562) as the `uuid` package writes them (lower-case hyphenated text), strictly
 * increasing from any number of threads: 48-bit Unix ms, an 18-bit counter that starts each
 * millisecond at a random value below 2^17 (at least 131,072 ids a ms), 56 random bits.
 * `stateFile` keeps ids increasing across restarts with the clock set back. Errors:
 * `IDFORGE_INVALID_ARGUMENT` (a batch size), `IDFORGE_CLOCK_BEHIND`, `IDFORGE_IO`.
 */
export declare class Uuid7s extends NativeUuid7s {
  /**
   * The next UUID as 16 bytes, written into `buf` at `offset` (returns `buf`, as the `uuid`
   * package's `v7(undefined, buf, offset)`), or a new Buffer.
   */
  nextBytes(): Buffer
  nextBytes<T extends Uint8Array>(buf: T, offset?: number): T
}

/** A fresh UUIDv7 from the process-wide generator: lower-case hyphenated text. */
export declare function uuid7(): string
/**
 * A fresh UUIDv7 from the process-wide generator as 16 bytes, written into `buf` at `offset`
 * (returns `buf`, as the `uuid` package's `v7(undefined, buf, offset)`), or a new Buffer.
 */
export declare function uuid7Bytes(): Buffer
export declare function uuid7Bytes<T extends Uint8Array>(buf: T, offset?: number): T
/**
 * The 16 bytes of a UUIDv7 written as text (hyphenated, 32 hex digits, in braces or after
 * `urn:uuid:`, either case); another version or variant throws `IDFORGE_INVALID_UUID`.
 */
export declare function parseUuid7(text: string): Buffer
/** The lower-case hyphenated text of the UUIDv7 in 16 bytes (checked). */
export declare function stringifyUuid7(bytes: Uint8Array): string
/** The fields of a UUIDv7 (text or 16 bytes). */
export declare function uuid7Fields(value: string | Uint8Array): import('./native').Uuid7Parts
/** The UUIDv7 of its fields (48, 12 and 62 bits), as text. */
export declare function uuid7FromFields(
  timeMs: number | bigint | string,
  randA: number,
  randB: number | bigint | string,
): string
/** A fresh ULID (26 upper-case Crockford base32 characters) from the process-wide generator. */
export declare function ulid(): string
/**
 * The canonical (upper-case) form of ULID text (either case, Crockford's aliases); anything
 * else throws `IDFORGE_INVALID_BASE32`.
 */
export declare function parseUlid(text: string): string
/** The fields of ULID text. */
export declare function ulidFields(text: string): import('./native').UlidParts
/** The ULID text of its fields (48 and 80 bits). */
export declare function ulidFromFields(timeMs: number | bigint | string, random: bigint): string
/** The same 128 bits as UUID text (a ULID made from a UUIDv7 gives that UUIDv7 back). */
export declare function ulidToUuid(text: string): string
/** The same 128 bits as ULID text, from any UUID (text or 16 bytes). */
export declare function uuidToUlid(value: string | Uint8Array): string

/**
 * A text form of a 64-bit id: `'decimal'` (JSON-safe, not sortable as text), `'base32'` (13
 * Crockford characters, TSID's form: sortable, case-insensitive) or `'base62'` (11 characters of
 * `0-9A-Za-z`: sortable byte-wise).
 */
export type TextForm = 'decimal' | 'base32' | 'base62'
/** The text forms, in their C order. */
export declare const TEXT_FORMS: readonly TextForm[]
/**
 * A 64-bit id (bigint, safe-integer number or decimal string) written in `form` (default
 * `'base32'`). An id out of range or an unknown form throws `IDFORGE_INVALID_ARGUMENT`.
 */
export declare function idToText(id: bigint | number | string, form?: TextForm): string
/**
 * The id whose text in `form` (default `'base32'`) is `text`. Only the id's one text is taken
 * (base32 in either case): a sign, a space, a leading zero, another width or `I L O U` throw
 * `IDFORGE_INVALID_DECIMAL`, `IDFORGE_INVALID_BASE32` or `IDFORGE_INVALID_BASE62`.
 */
export declare function idFromText(text: string, form?: TextForm): bigint

/** The kinds of id `describeId` reads. */
export type IdType = 'snowflake' | 'objectid' | 'flake128' | 'uuid7' | 'ulid'
/** The kinds, in the order the command line lists them. */
export declare const ID_TYPES: readonly IdType[]
/** How `describeId` reads its text. */
export interface DescribeOptions {
  /** The id's kind, instead of detecting it. */
  type?: IdType
  /** Read a snowflake written in this short text form (only its one text). */
  form?: TextForm
  /** The snowflake layout: a preset name, a spec, or a `Layout` (default `'twitter'`). */
  layout?: string | import('./native').Layout | import('./native').LayoutSpec
}
/**
 * The fields of any id written as text, in order, as `idforge decode` prints them: `type` and
 * `id` first, then `time` (RFC 3339 UTC) and the kind's own fields. Numbers are numbers
 * (bigints past 2^53); 64-bit values such as a snowflake's `id` are strings. Text that is no
 * id throws `IDFORGE_INVALID_ARGUMENT`, or the error of the kind it was read as.
 */
export declare function describeId(
  text: string,
  options?: DescribeOptions,
): Record<string, string | number | bigint>

/** Every error code the addon can throw, with its C status value, in `errors.json` order. */
export declare function errorCodes(): Array<import('./native').ErrorCodeInfo>
/** The package version. */
export declare function version(): string
/** Does nothing: the cost of one call into the addon (the benchmarks' floor). */
export declare function noop(): void

declare const idforge: {
  Snowflake: typeof import('./native').Snowflake
  Layout: typeof import('./native').Layout
  Segments: typeof Segments
  ObjectId: typeof ObjectId
  Flake128: typeof Flake128
  Flake128Generator: typeof Flake128Generator
  Uuid7s: typeof Uuid7s
  Ulids: typeof import('./native').Ulids
  uuid7: typeof uuid7
  uuid7Bytes: typeof uuid7Bytes
  parseUuid7: typeof parseUuid7
  stringifyUuid7: typeof stringifyUuid7
  uuid7Fields: typeof uuid7Fields
  uuid7FromFields: typeof uuid7FromFields
  idToText: typeof idToText
  idFromText: typeof idFromText
  TEXT_FORMS: typeof TEXT_FORMS
  describeId: typeof describeId
  ID_TYPES: typeof ID_TYPES
  ulid: typeof ulid
  parseUlid: typeof parseUlid
  ulidFields: typeof ulidFields
  ulidFromFields: typeof ulidFromFields
  ulidToUuid: typeof ulidToUuid
  uuidToUlid: typeof uuidToUlid
  ErrorCode: typeof import('./errors').ErrorCode
  errorTable: typeof import('./errors').errorTable
  errorCodes: typeof errorCodes
  version: typeof version
  noop: typeof noop
}
export default idforge

/**
 * JSON with 64-bit ids. A JavaScript number holds 53 bits, so a snowflake id in JSON is its
 * decimal text (`{"id":"1541815603606036480"}`, as the Python and Go bindings write it); these
 * write bigints that way and read the named keys back as bigints.
 */
export declare const json: {
  /** `JSON.stringify(value, …)` with every bigint written as its decimal text. */
  stringify(value: unknown, space?: string | number): string
  /** `JSON.parse(text)` with the values of `keys` (at any depth; arrays of them too) read as bigint ids. */
  parse<T = any>(text: string, keys?: readonly string[]): T
  /** `JSON.stringify`'s replacer: a bigint becomes its decimal text. */
  replacer(key: string, value: unknown): unknown
  /** A `JSON.parse` reviver reading the values of `keys` as bigint ids (`IDFORGE_INVALID_DECIMAL` on other text). */
  reviver(...keys: Array<string | readonly string[]>): (key: string, value: unknown) => unknown
  /** The bigint of an id's decimal text (1 to 20 digits, no leading zero, at most 2^64 - 1). */
  parseId(text: string): bigint
}
