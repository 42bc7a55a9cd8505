// Compiled by `tsc -p test/types` (in `npm test`): the package's declarations describe what a
// TypeScript user writes. Not run.
import idforge, {
  json,
  ErrorCode,
  Flake128,
  Flake128Generator,
  type IdforgeError,
  Layout,
  ObjectId,
  Segments,
  TEXT_FORMS,
  type TextForm,
  type SegmentOptionsInEffect,
  Snowflake,
  type SnowflakeParts,
  Ulids,
  type UlidParts,
  Uuid7s,
  type Uuid7Parts,
  parseUlid,
  parseUuid7,
  stringifyUuid7,
  idFromText,
  describeId,
  type IdType,
  idToText,
  ulid,
  ulidFields,
  ulidFromFields,
  ulidToUuid,
  uuid7,
  uuid7Bytes,
  uuid7Fields,
  uuid7FromFields,
  uuidToUlid,
} from 'idforge'

const g = new Snowflake({ layout: 'twitter', nodeId: 7, policy: 'wait', maxWaitMs: 50 })
const id: bigint = g.next()
const text: string = g.nextString()
const many: BigUint64Array = g.nextMany(10)
const parts: SnowflakeParts = g.decode(id)
const when: Date = parts.time
const later: Promise<bigint> = g.nextAsync()
const custom = new Snowflake({ layout: Layout.preset('js_safe') })
const small: number = custom.nextNumber()
const { min, max } = g.boundsAt(new Date())
const composed: bigint = g.layout.compose(Date.now(), 7, 0)

const oid = new ObjectId()
const hex: string = oid.toHexString()
const same: boolean = ObjectId.fromHex(hex).equals(oid)
const created: Date = oid.getTimestamp()

const f: Flake128 = new Flake128Generator('random').next()
const b62: string = f.toBase62()
const big: bigint = new Flake128(b62).toBigInt()

const seg = new Segments('memory:', 'orders', { step: 100 })
const connected: Promise<Segments> = Segments.connect('memory:', 'orders', { step: 100 })
void connected
const ready: Promise<void> = seg.ready()
const inEffect: SegmentOptionsInEffect = seg.options()
const prefetch: number = inEffect.prefetchPct

function codeOf(e: unknown): string | undefined {
  const err = e as IdforgeError
  return err.code === ErrorCode.INVALID_HEX ? 'hex' : err.code
}

const v: string = idforge.version()
export { id, text, many, when, later, small, min, max, composed, same, created, big, ready, codeOf, v }

const u7: string = uuid7()
const u7Bytes: Buffer = uuid7Bytes()
const u7Into: Uint8Array = uuid7Bytes(new Uint8Array(32), 16)
const u7s = new Uuid7s({ stateFile: 'uuid7.state' })
const u7Next: string = u7s.next()
const u7Many: string[] = u7s.nextMany(3)
const u7Buf: Buffer = u7s.nextBytes()
const u7Persisted: number | null = u7s.persistedMs
const u7Parts: Uuid7Parts = uuid7Fields(u7)
const u7RandB: bigint = u7Parts.randB
const u7Parsed: Buffer = parseUuid7(u7)
const u7Text: string = stringifyUuid7(u7Parsed)
const u7Made: string = uuid7FromFields(Date.now(), 1, 2n)
const ul: string = ulid()
const uls: string[] = new Ulids().nextMany(2)
const ulParts: UlidParts = ulidFields(parseUlid(ul))
const ulMade: string = ulidFromFields(ulParts.timeMs, ulParts.random)
const ulBack: string = uuidToUlid(ulidToUuid(ul))
const spread: boolean = new Snowflake({ randomStart: true }).randomStart
const viaDefault: string = idforge.uuid7() + idforge.ulid()

// JSON with 64-bit ids: bigints out as decimal text, named keys back as bigints.
const jsonText: string = json.stringify({ id: 1n, items: [2n] }, 2)
const jsonBack = json.parse<{ id: bigint; items: bigint[] }>(jsonText, ['id', 'items'])
const jsonId: bigint = jsonBack.id + json.parseId('42')
const viaReviver: unknown = JSON.parse(jsonText, json.reviver('id', ['items']))
const viaReplacer: string = JSON.stringify({ id: 1n }, json.replacer)

// Text forms of 64-bit ids.
const short: string = idToText(id) + idToText(1, 'base62') + idToText('42', 'decimal')
const form: TextForm = TEXT_FORMS[1]
const fromShort: bigint = idFromText(short.slice(0, 13), form)

// Any id's fields, by kind or detected.
const kindName: IdType = 'ulid'
const described: Record<string, string | number | bigint> = describeId(ulid(), { type: kindName })
const describedTime = describeId('1', { form: 'decimal', layout: 'discord' }).time
const describedByLayout = describeId('1', { layout: Layout.preset('discord') })
void [described, describedTime, describedByLayout]

