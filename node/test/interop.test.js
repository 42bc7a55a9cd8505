'use strict'
// Interop with the real npm packages: bson's ObjectId and @sapphire/snowflake.
const test = require('node:test')
const assert = require('node:assert/strict')
const bson = require('bson')
const { TwitterSnowflake, Snowflake: SapphireSnowflake } = require('@sapphire/snowflake')
const { ObjectId, Snowflake, Layout } = require('idforge')

test('our ObjectIds parse with bson, with the same timestamp', () => {
  for (let i = 0; i < 100; i++) {
    const ours = new ObjectId()
    const theirs = new bson.ObjectId(ours.toHexString())
    assert.equal(theirs.toHexString(), ours.toHexString())
    assert.equal(theirs.getTimestamp().getTime(), ours.getTimestamp().getTime())
    // By bytes, and by the object itself.
    assert.equal(new bson.ObjectId(ours.toBytes()).toHexString(), ours.toHexString())
    assert.ok(theirs.equals(ours.toHexString()))
  }
})

test("bson's ObjectIds parse with ours", () => {
  for (let i = 0; i < 100; i++) {
    const theirs = new bson.ObjectId()
    const fromHex = ObjectId.fromHex(theirs.toHexString())
    const fromObject = new ObjectId(theirs)
    const fromBytes = ObjectId.fromBytes(theirs.id)
    for (const ours of [fromHex, fromObject, fromBytes]) {
      assert.equal(ours.toHexString(), theirs.toHexString())
      assert.equal(ours.getTimestamp().getTime(), theirs.getTimestamp().getTime())
      assert.ok(ours.equals(theirs))
    }
  }
})

test('decoding a Twitter-layout id agrees with @sapphire/snowflake', () => {
  const layout = Layout.preset('twitter')
  assert.equal(BigInt(layout.epochMs), TwitterSnowflake.epoch)
  // Ids made by us, decoded by both.
  const g = new Snowflake({ layout: 'twitter', nodeId: 0b10110_01101 })
  for (const id of g.nextMany(500)) {
    const theirs = TwitterSnowflake.deconstruct(id)
    const ours = g.decode(id)
    assert.equal(BigInt(ours.timeMs), theirs.timestamp)
    assert.equal(BigInt(ours.node), (theirs.workerId << 5n) | theirs.processId)
    assert.equal(BigInt(ours.seq), theirs.increment)
  }
  // Ids made by sapphire, decoded by us.
  const sapphire = new SapphireSnowflake(TwitterSnowflake.epoch)
  for (let i = 0; i < 500; i++) {
    const id = sapphire.generate({ workerId: 7n, processId: 3n })
    const ours = layout.decompose(id)
    const theirs = sapphire.deconstruct(id)
    assert.deepEqual(
      [BigInt(ours.timeMs), BigInt(ours.node), BigInt(ours.seq)],
      [theirs.timestamp, (theirs.workerId << 5n) | theirs.processId, theirs.increment],
    )
  }
})
