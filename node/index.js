'use strict'
// The public module. The generators are native (native.js loads the addon); this file adds the
// id value classes (ObjectId, Flake128: plain JS objects, so making one costs no native wrapper
// or finalizer) and serves single snowflake ids and ObjectIds from small runs filled by one
// call into native code, since a crossing (and a BigInt made by native code) costs more than
// the id itself.

const native = loadNative()
const { ErrorCode, errorTable, idforgeError } = require('./errors.js')

// The addon for this machine: beside this file (a package installed from its file, or a
// checkout), else the platform package npm installed as an optional dependency. Without one,
// the error names this machine and the platforms that have an addon.
function loadNative() {
  try {
    return require('./native.js')
  } catch (cause) {
    const { optionalDependencies = {}, name } = require('./package.json')
    const here = `${process.platform}-${process.arch}`
    const supported = Object.keys(optionalDependencies).map((p) => p.slice(name.length + 1))
    const error = new Error(
      `idforge: no native addon loaded for ${here} (error.cause says why). Supported: ${supported.join(', ') || 'see the README'}. ` +
        'Reinstall without --omit=optional or --no-optional (npm installs the matching ' +
        `${name}-PLATFORM package), or build from source: see the README.`,
    )
    error.code = 'IDFORGE_UNSUPPORTED_PLATFORM'
    error.cause = cause
    throw error
  }
}

const { Snowflake, Layout, Segments, Flake128Generator, Uuid7s, Ulids, batchLen, MAX_BATCH } = native
const inspect = Symbol.for('nodejs.util.inspect.custom')

// ---- Snowflake: single ids from runs of one tick -------------------------------------------

// A run holds ids of one tick, made by one call; it is served only within the millisecond
// in which it was made, so an id's time is as fresh as a direct call's. The millisecond is read
// from cells a native thread keeps while runs are being filled (one load: `Date.now()` cost 40
// of the 100 ns of an id kept by a loop), or from `Date.now()` while that thread is not
// running or where buffers over native memory are refused (Electron). The run
// length adapts: it doubles while runs are used up within their millisecond and halves when
// one expires unused, so a slow caller wastes little of a tick's sequence space.
const MAX_RUN = 256
const VIEWS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
const fillRun = Snowflake.prototype.fillRun
const nativeNextNumber = Snowflake.prototype.nextNumber
const fillMany = Snowflake.prototype.fillMany
const nativeNextAsync = Snowflake.prototype.nextAsync
const nativeNextManyAsync = Snowflake.prototype.nextManyAsync
// [0]: the low 32 bits of the native clock's ms; [1]: 1 while [0] is kept current.
const MILLIS = (() => {
  const cells = native.millisCells()
  return cells === undefined ? new Uint32Array(2) : new Uint32Array(cells)
})()

function refill(g) {
  let views = g._views
  if (views === undefined) {
    const buf = new BigUint64Array(MAX_RUN)
    views = g._views = VIEWS.map((n) => buf.subarray(0, n))
    g._level = 0
  } else if (g._i >= g._n) {
    if (g._level < VIEWS.length - 1) g._level++
  } else if (g._level > 0) {
    g._level--
  }
  g._n = 0
  // Read before the run is made, so the run ends no later than its millisecond.
  const ms = Date.now()
  const tick = MILLIS[0]
  const view = views[g._level]
  const n = fillRun.call(g, view)
  g._view = view
  g._ms = ms
  g._tick = tick
  g._n = n
  g._i = 1
  return view[0]
}

/** Drops the unserved rest of the run, so ids made directly stay after every id served. */
function dropRun(g) {
  g._n = 0
  g._i = 0
}

Snowflake.prototype.next = function next() {
  const i = this._i
  if (i < this._n && (MILLIS[1] === 1 ? MILLIS[0] === this._tick : Date.now() === this._ms)) {
    this._i = i + 1
    return this._view[i]
  }
  return refill(this)
}

Snowflake.prototype.nextString = function nextString() {
  return this.next().toString()
}

Snowflake.prototype.nextNumber = function nextNumber() {
  if (this._safe === undefined) this._safe = this.layout.totalBits <= 53
  if (!this._safe) {
    dropRun(this)
    return nativeNextNumber.call(this) // throws IDFORGE_INVALID_LAYOUT
  }
  return Number(this.next())
}

Snowflake.prototype.nextMany = function nextMany(n) {
  // A valid size costs no crossing; anything else gets the addon's (the runtime's) error.
  if (!(Number.isInteger(n) && n >= 0 && n <= MAX_BATCH)) batchLen(typeof n === 'number' ? n : NaN)
  dropRun(this)
  const out = new BigUint64Array(n)
  fillMany.call(this, out)
  return out
}

Snowflake.prototype.nextAsync = function nextAsync() {
  dropRun(this)
  return nativeNextAsync.call(this)
}

Snowflake.prototype.nextManyAsync = function nextManyAsync(n) {
  dropRun(this)
  return nativeNextManyAsync.call(this, n)
}

// ---- ObjectId ------------------------------------------------------------------------------

const OID = 12
const POOL_IDS = 680
let pool = null // a Buffer of POOL_IDS fresh ObjectIds; never reused, so ids keep their bytes
let poolNext = 0
let poolEnd = 0
let poolUntil = 0 // Date.now() at which the pool's second ends
let poolUntilTick = 0 // the same, as the low 32 bits of the native clock's ms (MILLIS[0])

function takePooled(o) {
  if (
    poolNext < poolEnd &&
    (MILLIS[1] === 1 ? ((MILLIS[0] - poolUntilTick) | 0) < 0 : Date.now() < poolUntil)
  ) {
    o._b = pool
    o._o = poolNext
    poolNext += OID
    return
  }
  // Served only within the second they were made in, as a direct call's would be.
  const now = Date.now()
  const tick = MILLIS[0]
  pool = Buffer.allocUnsafeSlow(POOL_IDS * OID)
  poolEnd = native.objectIdFill(pool) * OID
  poolUntil = (Math.floor(now / 1000) + 1) * 1000
  // The ids' own second ends at (seconds + 1) * 1000 on the native clock; if the seconds were
  // read a moment before they moved on, serve the pool for the rest of this millisecond only.
  poolUntilTick = ((pool.readUInt32BE(0) + 1) * 1000) >>> 0
  if (((tick - poolUntilTick) | 0) >= 0) poolUntilTick = (tick + 1) >>> 0
  o._b = pool
  o._o = 0
  poolNext = OID
}

function isObjectIdLike(v) {
  return v !== null && typeof v === 'object' && typeof v.toHexString === 'function'
}

/** A MongoDB ObjectId (12 bytes: 4 of seconds, 5 random per process, a 3-byte counter). */
class ObjectId {
  /**
   * A fresh ObjectId, or the one given as 24 hex digits, 12 bytes, an `ObjectId` or any
   * object with `toHexString()` (such as the `bson` package's ObjectId).
   */
  constructor(value) {
    if (value === undefined) {
      takePooled(this)
      return
    }
    this._o = 0
    if (value instanceof ObjectId) {
      this._b = value._b
      this._o = value._o
      return
    }
    const b = Buffer.allocUnsafe(OID)
    if (typeof value === 'string') native.objectIdFromHex(value, b)
    else if (value instanceof Uint8Array) native.objectIdFromBytes(value, b)
    else if (isObjectIdLike(value)) native.objectIdFromHex(String(value.toHexString()), b)
    else {
      throw idforgeError(
        ErrorCode.INVALID_ARGUMENT,
        'an ObjectId is made from 24 hex digits, 12 bytes or another ObjectId',
      )
    }
    this._b = b
  }

  /** A fresh ObjectId. */
  static generate() {
    return new ObjectId()
  }

  /** The ObjectId written as 24 hex digits (either case). */
  static fromHex(hex) {
    if (typeof hex !== 'string') throw idforgeError(ErrorCode.INVALID_HEX, 'expected a string')
    return new ObjectId(hex)
  }

  /** The ObjectId of these 12 bytes. */
  static fromBytes(bytes) {
    if (!(bytes instanceof Uint8Array)) {
      throw idforgeError(ErrorCode.INVALID_LENGTH, 'expected 12 bytes in a Uint8Array')
    }
    return new ObjectId(bytes)
  }

  /** Whether `value` is 24 hex digits, 12 bytes or an ObjectId. */
  static isValid(value) {
    try {
      new ObjectId(value) // eslint-disable-line no-new
      return value !== undefined
    } catch {
      return false
    }
  }

  /** 24 lower-case hex digits. */
  toHexString() {
    return this._b.toString('hex', this._o, this._o + OID)
  }

  /** 24 lower-case hex digits. */
  toString() {
    return this.toHexString()
  }

  /** 24 lower-case hex digits (what `JSON.stringify` writes). */
  toJSON() {
    return this.toHexString()
  }

  /** A copy of the 12 bytes. */
  toBytes() {
    return Buffer.from(this._b.subarray(this._o, this._o + OID))
  }

  /** The creation time (whole seconds). */
  getTimestamp() {
    return new Date(this.timestamp * 1000)
  }

  /** The creation time in Unix seconds. */
  get timestamp() {
    return native.objectIdTimestamp(this._b.subarray(this._o, this._o + OID))
  }

  /** Whether `other` (an ObjectId, hex, bytes or a bson ObjectId) is the same id. */
  equals(other) {
    if (!(other instanceof ObjectId)) {
      try {
        other = new ObjectId(other)
      } catch {
        return false
      }
    }
    return this.compare(other) === 0
  }

  /** -1, 0 or 1: the order of the ids' bytes (creation second first). */
  compare(other) {
    return this._b.compare(other._b, other._o, other._o + OID, this._o, this._o + OID)
  }

  [inspect]() {
    return `ObjectId('${this.toHexString()}')`
  }
}

// ---- Flake128 ------------------------------------------------------------------------------

const FLAKE = 16

/** A 128-bit flake id: 64-bit Unix ms, 48-bit worker, 16-bit sequence (Boundary's flake). */
class Flake128 {
  /**
   * A fresh id (from the process-wide generator, random worker), or the id given as 22
   * base62 characters, 32 hex digits, 16 bytes, a `bigint` or a `Flake128`.
   */
  constructor(value) {
    if (value instanceof Flake128) {
      this._b = value._b
      return
    }
    const b = Buffer.allocUnsafe(FLAKE)
    if (value === undefined) native.flake128Next(b)
    else if (typeof value === 'string') {
      if (value.length === 32) native.flake128FromHex(value, b)
      else native.flake128FromBase62(value, b)
    } else if (value instanceof Uint8Array) native.flake128FromBytes(value, b)
    else if (typeof value === 'bigint') {
      if (value < 0n || value >= 1n << 128n) {
        throw idforgeError(ErrorCode.INVALID_ARGUMENT, 'a flake-128 id is 0 to 2^128 - 1')
      }
      native.flake128FromHex(value.toString(16).padStart(32, '0'), b)
    } else {
      throw idforgeError(
        ErrorCode.INVALID_ARGUMENT,
        'a Flake128 is made from base62, hex, 16 bytes, a bigint or another Flake128',
      )
    }
    this._b = b
  }

  /** The id written in base62 (22 characters). */
  static fromBase62(text) {
    return made((b) => native.flake128FromBase62(text, b))
  }

  /** The id written as 32 hex digits. */
  static fromHex(text) {
    return made((b) => native.flake128FromHex(text, b))
  }

  /** The id of these 16 bytes. */
  static fromBytes(bytes) {
    return made((b) => native.flake128FromBytes(bytes, b))
  }

  /** The id of `(time, worker, seq)`; `time` in Unix ms or a `Date`. */
  static compose(time, worker, seq = 0) {
    const ms = time instanceof Date ? time.getTime() : time
    return made((b) => native.flake128Compose(ms, worker, seq, b))
  }

  /** 22 base62 characters; they sort like the ids. */
  toBase62() {
    return native.flake128ToBase62(this._b)
  }

  /** 32 lower-case hex digits. */
  toHex() {
    return this._b.toString('hex')
  }

  /** The UUID form (8-4-4-4-12 hex digits) of the same 128 bits. */
  toUUID() {
    const h = this.toHex()
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  }

  /** A copy of the 16 bytes (big-endian). */
  toBytes() {
    return Buffer.from(this._b)
  }

  /** The id as a 128-bit unsigned `bigint`. */
  toBigInt() {
    return BigInt(`0x${this.toHex()}`)
  }

  /** Base62. */
  toString() {
    return this.toBase62()
  }

  /** Base62 (what `JSON.stringify` writes). */
  toJSON() {
    return this.toBase62()
  }

  /** The fields: `timeMs`, `time` (a `Date`), `worker`, `seq`. */
  decompose() {
    return native.flake128Decompose(this._b)
  }

  /** The creation time. */
  get time() {
    return this.decompose().time
  }

  /** Whether `other` is the same id. */
  equals(other) {
    return other instanceof Flake128 && this._b.equals(other._b)
  }

  /** -1, 0 or 1: the order of the ids (time first). */
  compare(other) {
    return this._b.compare(other._b)
  }

  [inspect]() {
    return `Flake128('${this.toBase62()}')`
  }
}

/** A Flake128 over 16 fresh bytes that `fill` writes. */
function made(fill) {
  const b = Buffer.allocUnsafe(FLAKE)
  fill(b)
  const f = Object.create(Flake128.prototype)
  f._b = b
  return f
}

/** A generator whose first range has arrived (rejects with the source's error or a timeout). */
Segments.connect = async function connect(url, tag, options) {
  const segments = new Segments(url, tag, options)
  await segments.ready()
  return segments
}

Flake128Generator.prototype.next = function next() {
  return made((b) => this.nextInto(b))
}

// ---- UUIDv7 and ULID ----------------------------------------------------------------------

const UUID = 16

/** A fresh UUIDv7 from the process-wide generator: lower-case hyphenated text. */
function uuid7() {
  return native.uuid7Next()
}

/** Writes 16 fresh bytes with `fill` into `buf` at `offset` (a new Buffer without `buf`). */
function bytesInto(fill, buf, offset) {
  if (buf === undefined) {
    const b = Buffer.allocUnsafe(UUID)
    fill(b)
    return b
  }
  const at = offset === undefined ? 0 : offset
  if (!(buf instanceof Uint8Array) || !Number.isInteger(at) || at < 0 || at + UUID > buf.length) {
    throw idforgeError(ErrorCode.INVALID_ARGUMENT, 'expected a Uint8Array with 16 bytes from offset')
  }
  fill(buf.subarray(at, at + UUID))
  return buf
}

/**
 * A fresh UUIDv7 from the process-wide generator as 16 bytes, written into `buf` at `offset`
 * (as the `uuid` package's `v7(undefined, buf, offset)`; returns `buf`), or a new Buffer.
 */
function uuid7Bytes(buf, offset) {
  return bytesInto(native.uuid7Fill, buf, offset)
}

Uuid7s.prototype.nextBytes = function nextBytes(buf, offset) {
  return bytesInto((b) => this.fill(b), buf, offset)
}

function needText(value) {
  if (typeof value !== 'string') throw idforgeError(ErrorCode.INVALID_ARGUMENT, 'expected a string')
  return value
}

/** The 16 bytes of the UUIDv7 written as text (any spelling `uuid` and RFC 9562 allow). */
function parseUuid7(text) {
  const b = Buffer.allocUnsafe(UUID)
  native.uuid7Parse(needText(text), b)
  return b
}

/** The lower-case hyphenated text of the UUIDv7 in 16 bytes. */
function stringifyUuid7(bytes) {
  return native.uuid7ToString(bytes)
}

/** The fields of a UUIDv7 (text or 16 bytes). */
function uuid7Fields(value) {
  return native.uuid7Decompose(typeof value === 'string' ? parseUuid7(value) : value)
}

/** The UUIDv7 of its fields (48, 12 and 62 bits), as text. */
function uuid7FromFields(timeMs, randA, randB) {
  const b = Buffer.allocUnsafe(UUID)
  native.uuid7Compose(timeMs, randA, randB, b)
  return native.uuid7ToString(b)
}

/** The text forms of a 64-bit id, for `idToText` and `idFromText`. */
const TEXT_FORMS = Object.freeze(['decimal', 'base32', 'base62'])

function needForm(form) {
  if (!TEXT_FORMS.includes(form)) {
    throw idforgeError(ErrorCode.INVALID_ARGUMENT, 'the text form is decimal, base32 or base62')
  }
  return form
}

/**
 * A 64-bit id (bigint, safe-integer number or decimal string) written in `form`: `'base32'`
 * (the default: 13 Crockford characters, TSID's form, sortable), `'base62'` (11 characters,
 * sortable byte-wise) or `'decimal'` (JSON-safe text).
 */
function idToText(id, form = 'base32') {
  return native.idToText(id, needForm(form))
}

/** The id (a bigint) whose text in `form` is `text`; only the id's one text is accepted. */
function idFromText(text, form = 'base32') {
  // No form is longer than 20 characters: a longer text is refused by its length all the same,
  // and the cut keeps the copy into native code small whatever the caller passes.
  return native.idFromText(needText(text).slice(0, 64), needForm(form))
}

/** The kinds of id `describeId` reads. */
const ID_TYPES = Object.freeze(['snowflake', 'objectid', 'flake128', 'uuid7', 'ulid'])

/**
 * The fields of any id written as text, in order, as `idforge decode` prints them: the kind is
 * detected (or named by `type`), `form` reads a snowflake in a short text form, `layout` (a
 * preset name or a layout) reads snowflakes. Numbers are numbers; 64-bit values such as a
 * snowflake's `id` are strings, so the object goes through `JSON.stringify`. Only a layout whose
 * ticks pass 2^53 gives bigints (`tick`, `time_ms`): then use this package's `json.stringify`.
 */
function describeId(text, options = {}) {
  if (options === null || typeof options !== 'object') {
    throw idforgeError(ErrorCode.INVALID_ARGUMENT, 'options must be an object')
  }
  const { type, form, layout } = options
  // The names themselves are checked by the runtime, with the rules every language shares.
  if (type !== undefined && typeof type !== 'string') {
    throw idforgeError(ErrorCode.INVALID_ARGUMENT, 'the type is snowflake, objectid, flake128, uuid7 or ulid')
  }
  // No id text is longer than 45 characters (a UUID after `urn:uuid:`): a longer one is
  // refused all the same, and the cut keeps the copy into native code small.
  return native.describeId(
    needText(text).slice(0, 64),
    type,
    form === undefined ? undefined : needForm(form),
    layout instanceof Layout ? layout.spec : layout,
  )
}

/** A fresh ULID from the process-wide generator. */
function ulid() {
  return native.ulidNext()
}

function ulidBytes(text) {
  const b = Buffer.allocUnsafe(UUID)
  native.ulidParse(needText(text), b)
  return b
}

/** The canonical (upper-case) form of ULID text (either case, Crockford's aliases). */
function parseUlid(text) {
  return native.ulidToString(ulidBytes(text))
}

/** The fields of ULID text. */
function ulidFields(text) {
  return native.ulidDecompose(ulidBytes(text))
}

/** The ULID text of its fields (48 and 80 bits; `random` a bigint). */
function ulidFromFields(timeMs, random) {
  const b = Buffer.allocUnsafe(UUID)
  native.ulidCompose(timeMs, random, b)
  return native.ulidToString(b)
}

function uuidText(b) {
  const h = b.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** The same 128 bits as UUID text (a ULID made from a UUIDv7 gives that UUIDv7 back). */
function ulidToUuid(text) {
  return uuidText(ulidBytes(text))
}

const UUID_TEXT = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i

/** The same 128 bits as ULID text, from any UUID (text or 16 bytes). */
function uuidToUlid(value) {
  if (typeof value === 'string') {
    if (!UUID_TEXT.test(value)) throw idforgeError(ErrorCode.INVALID_UUID, 'invalid uuid: not 32 hex digits')
    return native.ulidToString(Buffer.from(value.replace(/-/g, ''), 'hex'))
  }
  return native.ulidToString(value)
}

// ---- JSON with 64-bit ids -------------------------------------------------------------------
// A JavaScript number holds 53 bits, so a snowflake id in JSON is its decimal text (as
// idforge.pydantic and the other bindings write it); these read it back as a bigint.

const U64_MAX = (1n << 64n) - 1n

/** `JSON.stringify`'s replacer: a bigint becomes its decimal text; anything else stays. */
function bigintReplacer(key, value) {
  return typeof value === 'bigint' ? value.toString() : value
}

/** The bigint a snowflake id's decimal text stands for (1 to 20 digits, no leading zero, at most 2^64 - 1). */
function parseDecimalId(text) {
  // One text per id: no sign, no space, no leading zero (core/testdata/json_ids.json).
  if (typeof text !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(text)) {
    throw idforgeError(ErrorCode.INVALID_DECIMAL, `an id is 1 to 20 decimal digits, no leading zero, not ${JSON.stringify(String(text)).slice(0, 40)}`)
  }
  const n = BigInt(text)
  if (n > U64_MAX) throw idforgeError(ErrorCode.INVALID_DECIMAL, 'an id is at most 2^64 - 1')
  return n
}

/**
 * A `JSON.parse` reviver that reads the values of `keys` (property names, at any depth, and
 * the items of arrays under them) back as bigint ids; text that is not an id throws
 * `IDFORGE_INVALID_DECIMAL`. Numbers are left as they are: past 2^53 they are already wrong.
 */
function bigintReviver(...keys) {
  const names = new Set(keys.flat())
  return function revive(key, value) {
    if (typeof value === 'string' && names.has(key)) return parseDecimalId(value)
    if (Array.isArray(value) && names.has(key)) {
      return value.map((v) => (typeof v === 'string' ? parseDecimalId(v) : v))
    }
    return value
  }
}

const json = Object.freeze({
  /** `JSON.stringify(value, …)` with bigint ids written as decimal text. */
  stringify: (value, space) => JSON.stringify(value, bigintReplacer, space),
  /** `JSON.parse(text)` with the values of `keys` read back as bigint ids. */
  parse: (text, keys) => JSON.parse(text, bigintReviver(...(keys || []))),
  replacer: bigintReplacer,
  reviver: bigintReviver,
  parseId: parseDecimalId,
})

// Every name shorthand: Node reads this literal (cjs-module-lexer) for index.mjs's named exports.
const { errorCodes, version, noop } = native

module.exports = {
  json,
  Snowflake,
  Layout,
  ObjectId,
  Flake128,
  Flake128Generator,
  Segments,
  Uuid7s,
  Ulids,
  uuid7,
  uuid7Bytes,
  parseUuid7,
  stringifyUuid7,
  uuid7Fields,
  uuid7FromFields,
  idToText,
  idFromText,
  TEXT_FORMS,
  describeId,
  ID_TYPES,
  ulid,
  parseUlid,
  ulidFields,
  ulidFromFields,
  ulidToUuid,
  uuidToUlid,
  ErrorCode,
  errorTable,
  errorCodes,
  version,
  noop,
}
