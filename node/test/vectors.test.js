'use strict'
// The shared vectors of core/testdata, through the Node API.
const test = require('node:test')
const assert = require('node:assert/strict')
const { Layout, Snowflake, ObjectId, Flake128 } = require('idforge')
const { load, throwsCode } = require('./helpers.js')

const SNOW = load('snowflake.json')
const OID = load('objectid.json')
const FLAKE = load('flake128.json')

function layout(spec) {
  if (typeof spec === 'string') return Layout.preset(spec)
  return new Layout({
    // Decimal strings: some epochs are past 2^53.
    epochMs: spec.epoch_ms,
    tickMs: spec.tick_ms,
    timeBits: spec.time_bits,
    nodeBits: spec.node_bits,
    seqBits: spec.seq_bits,
    order: spec.order,
    unsigned: spec.unsigned,
  })
}

test('presets', () => {
  assert.deepEqual(
    Layout.presetNames(),
    SNOW.presets.map((p) => p.name),
  )
  for (const p of SNOW.presets) {
    const got = Layout.preset(p.name)
    assert.deepEqual(got.toJSON(), layout(p).toJSON())
    assert.deepEqual(
      [got.epochMs, got.tickMs, got.timeBits, got.nodeBits, got.seqBits, got.order, got.unsigned],
      [Number(p.epoch_ms), Number(p.tick_ms), p.time_bits, p.node_bits, p.seq_bits, p.order, p.unsigned],
    )
  }
})

test('preset names', () => {
  for (const row of SNOW.preset_names) {
    if (row.preset === null) throwsCode(() => Layout.preset(row.input), 'INVALID_LAYOUT')
    else assert.deepEqual(Layout.preset(row.input).toJSON(), Layout.preset(row.preset).toJSON())
  }
})

test('valid and invalid layouts', () => {
  for (const spec of SNOW.valid_layouts) layout(spec)
  for (const row of SNOW.invalid_layouts) throwsCode(() => layout(row.layout), row.error)
})

test('compose and decompose', () => {
  for (const r of SNOW.compose) {
    const l = layout(r.layout)
    assert.equal(l.composeTick(BigInt(r.tick), BigInt(r.node), BigInt(r.seq)), BigInt(r.id))
    // Decimal strings are ids too.
    assert.equal(l.composeTick(r.tick, r.node, r.seq), BigInt(r.id))
    const p = l.decompose(BigInt(r.id))
    assert.deepEqual(
      [p.tick, p.timeMs, p.node, p.seq],
      [BigInt(r.tick), Number(r.time_ms), Number(r.node), Number(r.seq)],
    )
    if (Number(r.time_ms) <= 8.64e15) assert.equal(p.time.getTime(), Number(r.time_ms))
    assert.deepEqual(l.decompose(r.id), p)
  }
  for (const r of SNOW.invalid_compose) {
    throwsCode(() => layout(r.layout).composeTick(BigInt(r.tick), BigInt(r.node), BigInt(r.seq)), r.error)
  }
  for (const r of SNOW.invalid_decompose) {
    throwsCode(() => layout(r.layout).decompose(BigInt(r.id)), r.error)
  }
})

test('bounds and epoch checks', () => {
  for (const r of SNOW.bounds_at) {
    const { min, max } = layout(r.layout).boundsAt(BigInt(r.time_ms))
    assert.deepEqual([min, max], [BigInt(r.min), BigInt(r.max)])
  }
  for (const r of SNOW.invalid_bounds_at) {
    throwsCode(() => layout(r.layout).boundsAt(r.time_ms), r.error)
  }
  for (const r of SNOW.check_epoch) {
    if (r.error === null) layout(r.layout).checkEpoch(r.now_ms)
    else throwsCode(() => layout(r.layout).checkEpoch(r.now_ms), r.error)
  }
})

test('generator construction errors', () => {
  for (const r of SNOW.invalid_generator_new) {
    throwsCode(() => new Snowflake({ layout: layout(r.layout).toJSON(), nodeId: BigInt(r.node) }), r.error)
  }
})

test('ObjectId vectors', () => {
  for (const r of [...OID.timestamps, ...OID.legacy]) {
    const oid = new ObjectId(r.hex)
    assert.equal(oid.timestamp, r.seconds)
    assert.equal(oid.getTimestamp().toISOString().replace('.000Z', 'Z'), r.rfc3339)
  }
  for (const r of OID.parse) {
    assert.equal(new ObjectId(r.input).toHexString(), r.hex)
    assert.equal(ObjectId.fromHex(r.input).toString(), r.hex)
  }
  for (const r of OID.from_parts) {
    assert.equal(new ObjectId(r.hex).toBytes().toString('hex'), r.hex)
    assert.equal(ObjectId.fromBytes(Buffer.from(r.hex, 'hex')).toHexString(), r.hex)
  }
  for (const r of OID.invalid_hex) throwsCode(() => new ObjectId(r.input), r.error)
  for (const r of OID.invalid_bytes) throwsCode(() => new ObjectId(Buffer.from(r.bytes_hex, 'hex')), r.error)
})

test('Flake128 vectors', () => {
  for (const r of FLAKE.parts) {
    const f = Flake128.compose(r.time_ms, r.worker, r.seq)
    assert.equal(f.toBigInt(), BigInt(r.u128))
    assert.deepEqual([f.toHex(), f.toBase62(), f.toBytes().toString('hex')], [r.hex, r.base62, r.bytes_hex])
    assert.ok(new Flake128(r.base62).equals(f))
    assert.ok(Flake128.fromHex(r.hex).equals(f))
    assert.ok(new Flake128(BigInt(r.u128)).equals(f))
    assert.ok(new Flake128(f.toUUID().replaceAll('-', '')).equals(f))
    const p = f.decompose()
    assert.deepEqual([p.timeMs, p.worker, p.seq], [Number(r.time_ms), r.worker, r.seq])
  }
  for (const r of FLAKE.boundary_base62) {
    const f = Flake128.fromBase62(r.input)
    const p = f.decompose()
    assert.deepEqual([p.timeMs, p.worker, p.seq, f.toBase62()], [Number(r.time_ms), r.worker, r.seq, r.base62])
    assert.equal(f.toBigInt(), BigInt(r.u128))
  }
  for (const r of FLAKE.invalid_base62) throwsCode(() => Flake128.fromBase62(r.input), r.error)
  for (const r of FLAKE.invalid_hex) throwsCode(() => Flake128.fromHex(r.input), r.error)
  for (const r of FLAKE.invalid_bytes) throwsCode(() => new Flake128(Buffer.from(r.bytes_hex, 'hex')), r.error)
  for (const r of FLAKE.invalid_parts) throwsCode(() => Flake128.compose(r.time_ms, r.worker, r.seq), r.error)
})

test('layout text: preset names and specs, with one message for a bad one', () => {
  const TEXT = load('layout_text.json')
  for (const r of TEXT.valid) {
    const want = new Layout({
      epochMs: r.epoch_ms,
      tickMs: r.tick_ms,
      timeBits: r.time_bits,
      nodeBits: r.node_bits,
      seqBits: r.seq_bits,
      order: r.order,
      unsigned: r.unsigned,
    })
    const got = Layout.parse(r.text)
    assert.deepEqual(got.toJSON(), want.toJSON(), r.text)
    assert.equal(String(got), r.display)
    assert.deepEqual(Layout.parse(got.spec).toJSON(), want.toJSON())
    assert.deepEqual(new Snowflake({ layout: r.text }).layout.toJSON(), want.toJSON())
  }
  for (const r of TEXT.invalid) {
    assert.throws(() => Layout.parse(r.text), (e) => {
      assert.equal(e.code, 'IDFORGE_INVALID_LAYOUT', r.text)
      assert.equal(e.message, `invalid layout: ${r.message}`, r.text)
      return true
    })
    throwsCode(() => new Snowflake({ layout: r.text }), 'INVALID_LAYOUT')
  }
})

const ID_TEXT = load('id_text.json')
const { idToText, idFromText, TEXT_FORMS } = require('idforge')

test('id text forms: every vector both ways', () => {
  assert.deepEqual([...TEXT_FORMS], ['decimal', 'base32', 'base62'])
  for (const row of ID_TEXT.ids) {
    const id = BigInt(row.id)
    for (const form of TEXT_FORMS) {
      assert.equal(idToText(id, form), row[form], `${form} of ${row.id}`)
      assert.equal(idToText(row.id, form), row[form], 'a decimal string id')
      assert.equal(idFromText(row[form], form), id, `${form} ${row[form]}`)
    }
    assert.equal(idToText(id), row.base32, 'base32 is the default')
  }
  for (const row of ID_TEXT.parse) assert.equal(idFromText(row.text, row.form), BigInt(row.id))
  for (const row of ID_TEXT.errors) throwsCode(() => idFromText(row.text, row.form), row.error)
})

test('describing an id refuses a second text of it (a leading zero)', () => {
  const { describeId } = require('idforge')
  for (const row of ID_TEXT.describe_errors) {
    const options = row.kind === 'any' ? {} : { type: row.kind }
    throwsCode(() => describeId(row.text, options), row.error)
  }
  // An id argument given as text: its one text only.
  throwsCode(() => idToText('007'), 'INVALID_DECIMAL')
})

test('id text forms: bad arguments, and base32 sorts like the ids', () => {
  throwsCode(() => idToText(-1n), 'INVALID_ARGUMENT')
  throwsCode(() => idToText(1n << 64n), 'INVALID_ARGUMENT')
  throwsCode(() => idToText(2 ** 53), 'INVALID_ARGUMENT')
  throwsCode(() => idToText(1n, 'base64'), 'INVALID_ARGUMENT')
  throwsCode(() => idFromText(1n), 'INVALID_ARGUMENT')
  throwsCode(() => idFromText('1', 'hex'), 'INVALID_ARGUMENT')
  // The worst length: refused by its length, with the form's error.
  throwsCode(() => idFromText('1'.repeat(10_000_000), 'decimal'), 'INVALID_DECIMAL')
  throwsCode(() => idFromText('1'.repeat(10_000_000), 'base32'), 'INVALID_BASE32')
  throwsCode(() => idFromText('1'.repeat(10_000_000), 'base62'), 'INVALID_BASE62')
  const ids = ID_TEXT.ids.map((r) => BigInt(r.id))
  const texts = ids.map((id) => idToText(id))
  assert.deepEqual([...texts].sort(), texts)
  assert.equal(typeof idToText(12), 'string')
  assert.equal(idFromText('000000000000C'), 12n)
})
