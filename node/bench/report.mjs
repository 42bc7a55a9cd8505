// Ratios and targets of a bench.mjs --json run; rewrites BENCHMARKS.md between
// <!-- nodebench:begin --> and <!-- nodebench:end -->, keeping the previous run's verdicts
// beside this run's: a target is met when both runs pass.
//
//   node bench/report.mjs results.json [--markdown ../BENCHMARKS.md] [--command "..."]
import { readFileSync, writeFileSync } from 'node:fs'
import { execSync } from 'node:child_process'
import { cpus } from 'node:os'

const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : fallback
}
const data = JSON.parse(readFileSync(args[0], 'utf8'))
const ns = Object.fromEntries(data.rows.filter((r) => r.ns !== null).map((r) => [r.name, r.ns]))
const loopNs = Object.fromEntries((data.loops ?? []).map((r) => [r.name, r.ns]))
const ratio = (a, b, from = ns) => (a in from && b in from ? from[a] / from[b] : null)
const many = ns['idforge/Snowflake.nextMany(100000) per call']
const rate = many ? (100_000 / many) * 1e9 : null
const speedup = (v) => `${v.toFixed(2)}×`

// ---- Two runs, one verdict (issue 24; the JS twin of ci/bench/bench_verdicts.py) ------------------

/** Markdown table cells of one row. */
const cellsOf = (line) => line.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim())

/** The run recorded in an old section: its verdicts comment, or for a section written before
 * the rule its targets table and "at commit X"; null when it has neither. */
function previousRun(section) {
  const m = section.match(/^<!-- verdicts: (\{.*\}) -->$/m)
  if (m) {
    try {
      return JSON.parse(m[1])
    } catch {} // a hand-damaged line: the table is still there
  }
  const lines = section.split('\n')
  const at = lines.findIndex((l) => l.startsWith('|') && cellsOf(l).includes('verdict'))
  if (at < 0) return null
  const col = cellsOf(lines[at]).indexOf('verdict')
  const targets = {}
  for (const line of lines.slice(at + 2)) {
    if (!line.startsWith('|')) break
    const c = cellsOf(line)
    targets[c[0]] = { result: c[1], verdict: c[col] }
  }
  const commit = section.match(/at commit ([0-9a-f]{7,40})/)?.[1] ?? null
  const date = section.match(/ on (\d{4}-\d\d-\d\d \d\d:\d\d UTC)/)?.[1] ?? null
  return { commit, date, targets }
}

/** The previous run's result and verdict (with its commit), and "MET" only when both pass. */
function verdictCells(name, verdict, previous) {
  const prev = previous?.targets?.[name]
  if (prev?.verdict !== 'PASS' && prev?.verdict !== 'MISS') return ['—', 'not yet']
  const commit = (previous.commit ?? '').split(' ')[0]
  const shown = `${prev.result} ${prev.verdict}${commit ? ` (${commit})` : ''}`
  return [shown, verdict === 'PASS' && prev.verdict === 'PASS' ? 'MET' : 'not yet']
}

// ---- This run ---------------------------------------------------------------------------------

const mdPath = opt('--markdown')
const markers = /<!-- nodebench:begin -->([\s\S]*)<!-- nodebench:end -->/
const text = mdPath ? readFileSync(mdPath, 'utf8') : ''
if (mdPath && !markers.test(text)) throw new Error(`${mdPath} has no nodebench markers`)
const previous = mdPath ? previousRun(text.match(markers)[1]) : null

// Speed against a peer: the plain loop's figures when the run has them ("what a user's loop
// sees"), else mitata's; the measure's name says which, so a run is only paired with a run
// measured the same way.
const peers = [
  ['@sapphire/snowflake generate() / our Snowflake.next()', 'peer/@sapphire/snowflake generate()', 'idforge/Snowflake.next()', '≥ 2×', 2],
  ['bson new ObjectId() / our new ObjectId()', 'peer/bson new ObjectId()', 'idforge/new ObjectId()', '≥ 1×', 1],
]
const byLoop = peers.some(([, peer, our]) => ratio(peer, our, loopNs) !== null)
const targets = peers.map(([name, peer, our, target, min]) =>
  byLoop
    ? [`${name} (speed-up, plain loop)`, ratio(peer, our, loopNs), target, min, speedup]
    : [`${name} (speed-up)`, ratio(peer, our), target, min, speedup],
)
targets.push(['Snowflake.nextMany(100000)', rate, '≥ 50 M ids/s', 50e6, (v) => `${(v / 1e6).toFixed(1)} M ids/s`])

let commit = 'unknown'
try {
  commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim()
} catch {}
const stamp = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`

const lines = ['| measure | result | target | verdict | previous run (commit) | both runs |', '| --- | ---: | ---: | --- | --- | --- |']
const verdicts = {}
for (const [name, value, target, min, fmt] of targets) {
  const result = value === null ? 'n/a' : fmt(value)
  const verdict = value === null ? 'n/a' : value >= min ? 'PASS' : 'MISS'
  lines.push(`| ${name} | ${result} | ${target} | ${verdict} | ${verdictCells(name, verdict, previous).join(' | ')} |`)
  verdicts[name] = { result, verdict }
}
const loopDesc = data.loop ? `best of ${data.loop.rounds} × ${data.loop.n.toLocaleString('en-US')} calls, every id kept` : ''
if (byLoop) {
  const ns1 = (v) => (v === undefined ? 'n/a' : v.toFixed(1))
  const x = (v) => (v === null ? 'n/a' : speedup(v))
  lines.push('', `Plain loop (${loopDesc}) beside mitata (mean ns per call):`, '')
  lines.push('| comparison | plain loop: peer / ours (ns) | speed-up | mitata: peer / ours (ns) | speed-up |', '| --- | ---: | ---: | ---: | ---: |')
  for (const [name, peer, our] of peers) {
    lines.push(`| ${name} | ${ns1(loopNs[peer])} / ${ns1(loopNs[our])} | ${x(ratio(peer, our, loopNs))} | ${ns1(ns[peer])} / ${ns1(ns[our])} | ${x(ratio(peer, our))} |`)
  }
}
lines.push('', '| benchmark | ns per call | × no-op native call |', '| --- | ---: | ---: |')
const floor = ns['floor/no-op native call']
for (const r of data.rows) {
  const cell = r.ns === null ? 'error' : r.ns.toFixed(1)
  const x = r.ns === null || !floor ? '' : `${(r.ns / floor).toFixed(2)}`
  lines.push(`| \`${r.name}\` | ${cell} | ${x} |`)
}
lines.push('', `<!-- verdicts: ${JSON.stringify({ commit, date: stamp, targets: verdicts })} -->`)

const method = byLoop
  ? `verdicts on speed against a peer from a plain loop, ${loopDesc}; mitata's mean ns per call, one run, beside it`
  : 'mitata, one run; mean ns per call'
const head = `Generated by \`${opt('--command', 'node/bench/run.sh')}\` (${method}) on ${stamp}, at commit ${commit}; Node ${data.node}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}).`
const section = [head, '', ...lines].join('\n')
console.log(section)
if (mdPath) {
  writeFileSync(mdPath, text.replace(markers, () => `<!-- nodebench:begin -->\n${section}\n<!-- nodebench:end -->`))
}
