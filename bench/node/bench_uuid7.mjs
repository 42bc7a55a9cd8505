// Node UUIDv7 benchmarks: idforge's uuid7() against the uuid package's v7() (both return
// lower-case hyphenated text), with the 16-byte forms and ULIDs beside them; one mitata run,
// then a plain loop that keeps every id (the figures the verdicts use: what a user's loop sees).
//
//   node bench/node/bench_uuid7.mjs [--json out.json]      (bench/node/run.sh uuid7 also reports)
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
const { ulid: npmUlid, monotonicFactory } = require('ulid')

const ours = new idforge.Uuid7s()
const ulids = new idforge.Ulids()
const monotonic = monotonicFactory()
const into = new Uint8Array(16)

const cases = [
  ['floor/no-op native call', () => idforge.noop()],
  ['idforge/uuid7()', () => idforge.uuid7()],
  ['idforge/Uuid7s.next()', () => ours.next()],
  ['idforge/uuid7Bytes(buf)', () => idforge.uuid7Bytes(into)],
  ['idforge/ulid()', () => idforge.ulid()],
  ['idforge/Ulids.next()', () => ulids.next()],
  ['peer/uuid v7()', () => uuidv7()],
  ['peer/uuid v7(undefined, buf)', () => uuidv7(undefined, into)],
  ['peer/ulid ulid()', () => npmUlid()],
  ['peer/ulid monotonicFactory()()', () => monotonic()],
]
for (const [name, fn] of cases) bench(name, () => do_not_optimize(fn()))

const LOOP_N = Number(process.env.IDFORGE_BENCH_LOOP_N || 1_000_000)
const LOOP_ROUNDS = 7
const loopCases = [
  ['idforge/uuid7()', (out) => { for (let i = 0; i < out.length; i++) out[i] = idforge.uuid7() }],
  ['peer/uuid v7()', (out) => { for (let i = 0; i < out.length; i++) out[i] = uuidv7() }],
  ['idforge/Uuid7s.next()', (out) => { for (let i = 0; i < out.length; i++) out[i] = ours.next() }],
  ['idforge/ulid()', (out) => { for (let i = 0; i < out.length; i++) out[i] = idforge.ulid() }],
  ['peer/ulid monotonicFactory()()', (out) => { for (let i = 0; i < out.length; i++) out[i] = monotonic() }],
]

const jsonAt = process.argv.indexOf('--json')
const results = await run({ format: jsonAt > 0 ? 'quiet' : 'mitata' })
const rows = results.benchmarks.map((t) => ({ name: t.alias, ns: t.runs[0].stats?.avg ?? null }))
runLoopsAndWrite(rows, loopCases, LOOP_N, LOOP_ROUNDS, jsonAt > 0 ? process.argv[jsonAt + 1] : undefined)
