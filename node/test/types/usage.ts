// Compiled by `tsc -p test/types` (in `npm test`): the package's declarations describe what a
// TypeScript user writes. Not run.
import idforge, {
  ErrorCode,
  Flake128,
  Flake128Generator,
  type IdforgeError,
  Layout,
  ObjectId,
  Segments,
  type SegmentOptionsInEffect,
  Snowflake,
  type SnowflakeParts,
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
