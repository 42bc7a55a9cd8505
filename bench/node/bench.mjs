// Node benchmarks: idforge against its peers and a no-op native call, in one mitata run, then
// the per-call comparisons with a peer again in a plain loop that keeps every id (the figures the
// verdicts use: what a user's loop sees).
//
//   node bench/node/bench.mjs [--json out.json]     (npm run bench in node/, or bench/node/run.sh, which also reports)
//   IDFORGE_BENCH_LOOP_N=20000 node bench/node/bench.mjs --loops-only     (smoke test: no mitata,
//                                                                     short loops)
//
// Each case makes one id per call (or one batch for nextMany), as a user would. Snowflake
// generators run a layout with 22 sequence bits (4 M ids a ms): with Twitter's 12 bits any
// generator is capped at 4.096 M ids/s, and a tight loop makes ids faster than that, so the
// loop would time the clock's pace (and exhaust the policy's lead) rather than the call.
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { runLoopsAndWrite } from './loops.mjs'

// The addon and the peers (node/'s devDependencies) are node/'s: resolved from there, and the
// peers published only as ES modules imported from where they resolve.
const require = createRequire(new URL('../../node/package.json', import.meta.url))
const esm = (name) => import(pathToFileURL(require.resolve(name)).href)
const idforge = require('./index.js')
const { bench, do_not_optimize, run } = await esm('mitata')
const { v7: uuidv7 } = await esm('uuid')
const { ObjectId: BsonObjectId } = require('bson')
const { Snowflake: SapphireSnowflake } = require('@sapphire/snowflake')
const FlakeId = require('flake-idgen')
const { Snowflake: NodejsSnowflake } = require('nodejs-snowflake')

const wide = { epochMs: 1_577_836_800_000, tickMs: 1, timeBits: 41, nodeBits: 0, seqBits: 22 }
const ours = new idforge.Snowflake({ layout: wide })
const many = new idforge.Snowflake({ layout: wide })
const flake = new idforge.Flake128Generator()
const sapphire = new SapphireSnowflake(new Date('2020-01-01T00:00:00Z'))
// flake-idgen throws past 4096 ids in a millisecond (its sequence space), so like every
// generator with a 12-bit sequence it gets a fresh instance each 4000 ids.
let flakeIdgen = new FlakeId()
let flakeIdgenLeft = 4000
function flakeIdgenNext() {
  if (--flakeIdgenLeft === 0) {
    flakeIdgen = new FlakeId()
    flakeIdgenLeft = 4000
  }
  return flakeIdgen.next()
}
const nodejsSnowflake = new NodejsSnowflake()

bench('floor/no-op native call', () => idforge.noop())
bench('idforge/Snowflake.next()', () => do_not_optimize(ours.next()))
bench('idforge/Snowflake.nextString()', () => do_not_optimize(ours.nextString()))
bench('idforge/new ObjectId()', () => do_not_optimize(new idforge.ObjectId()))
bench('idforge/new ObjectId().toHexString()', () => do_not_optimize(new idforge.ObjectId().toHexString()))
bench('idforge/Flake128Generator.next()', () => do_not_optimize(flake.next()))
bench('idforge/new Flake128()', () => do_not_optimize(new idforge.Flake128()))
bench('idforge/Snowflake.nextMany(100000) per call', () => do_not_optimize(many.nextMany(100_000)))
bench('peer/@sapphire/snowflake generate()', () => do_not_optimize(sapphire.generate()))
bench('peer/bson new ObjectId()', () => do_not_optimize(new BsonObjectId()))
bench('peer/bson new ObjectId().toHexString()', () => do_not_optimize(new BsonObjectId().toHexString()))
bench('peer/uuid v7()', () => do_not_optimize(uuidv7()))
bench('peer/flake-idgen next()', () => do_not_optimize(flakeIdgenNext()))
bench('peer/nodejs-snowflake getUniqueID()', () => do_not_optimize(nodejsSnowflake.getUniqueID()))
bench('clock/Date.now()', () => do_not_optimize(Date.now()))

// The plain loop (bench/loops.mjs: every id kept, as a user's loop keeps them).
const LOOP_N = Number(process.env.IDFORGE_BENCH_LOOP_N || 2_000_000)
const LOOP_ROUNDS = 7
const loopCases = [
  ['idforge/new ObjectId()', (out) => { for (let i = 0; i < out.length; i++) out[i] = new idforge.ObjectId() }],
  ['peer/bson new ObjectId()', (out) => { for (let i = 0; i < out.length; i++) out[i] = new BsonObjectId() }],
  ['idforge/Snowflake.next()', (out) => { for (let i = 0; i < out.length; i++) out[i] = ours.next() }],
  ['peer/@sapphire/snowflake generate()', (out) => { for (let i = 0; i < out.length; i++) out[i] = sapphire.generate() }],
]

const jsonAt = process.argv.indexOf('--json')
let rows = []
if (!process.argv.includes('--loops-only')) {
  const results = await run({ format: jsonAt > 0 ? 'quiet' : 'mitata' })
  rows = results.benchmarks.map((t) => ({ name: t.alias, ns: t.runs[0].stats?.avg ?? null }))
}
runLoopsAndWrite(rows, loopCases, LOOP_N, LOOP_ROUNDS, jsonAt > 0 ? process.argv[jsonAt + 1] : undefined)
