'use strict'
// Segments over striped servers (`idforge://a,b?mode=any`), against `idforge serve --stripe K/N`
// servers of the test's own (IDFORGE_BIN): ids from both, none twice, calls that go on when one
// server is killed, and servers whose ids could meet refused.
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { mkdtempSync, rmSync, readFileSync, existsSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')

const { Segments } = require('idforge')
const { needed } = require('./helpers')

const BLOCK = 1000n
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts `idforge serve` with `args` per server; killed after the test. Returns [child, port]s. */
async function serve(t, bin, ...argsPerServer) {
  const dir = mkdtempSync(join(tmpdir(), 'idforge-node-stripes-'))
  const servers = argsPerServer.map((args, i) => {
    const portFile = join(dir, `port${i}`)
    const child = spawn(bin, ['serve', '--port', '0', '--port-file', portFile, '--data-dir', join(dir, `d${i}`), ...args], {
      stdio: 'ignore',
    })
    return { child, portFile }
  })
  t.after(() => {
    for (const s of servers) s.child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true, maxRetries: 40, retryDelay: 50 })
  })
  for (const s of servers) {
    for (let i = 0; i < 1500 && !existsSync(s.portFile); i++) await sleep(20)
    s.port = Number(readFileSync(s.portFile, 'utf8').trim())
  }
  return servers
}


test('mode=any: ids from every live stripe, none twice, through a server kill', async (t) => {
  const bin = needed(t, 'IDFORGE_BIN')
  if (!bin) return
  const servers = await serve(t, bin, ['--stripe', '0/2', '--stripe-block', '1000'], ['--stripe', '1/2', '--stripe-block', '1000'])
  const url = `idforge://${servers.map((s) => `127.0.0.1:${s.port}`).join(',')}?mode=any`
  const s = new Segments(url, 'js-stripes', { step: 100, maxStep: 100, timeoutMs: 2000 })
  const ids = Array.from(await s.nextManyAsync(5000))
  servers[0].child.kill('SIGKILL')
  for (let i = 0; i < 2000; i++) ids.push(await s.nextAsync())
  assert.equal(new Set(ids).size, ids.length)
  const stripes = new Set(ids.map((id) => ((id - 1n) / BLOCK) % 2n))
  assert.deepEqual([...stripes].sort(), [0n, 1n])
})

test('mode=any: servers whose ids could meet are refused (SOURCE_UNAVAILABLE)', async (t) => {
  const bin = needed(t, 'IDFORGE_BIN')
  if (!bin) return
  const servers = await serve(t, bin, ['--stripe', '0/2'], ['--stripe', '0/2'])
  const url = `idforge://127.0.0.1:${servers[0].port},127.0.0.1:${servers[1].port}?mode=any`
  const s = new Segments(url, 'js-clash', { step: 10, maxStep: 10, timeoutMs: 2000 })
  let failure
  for (let i = 0; i < 1000 && !failure; i++) {
    try {
      await s.nextAsync()
    } catch (e) {
      failure = e
    }
  }
  assert.ok(failure, 'calls fail once both servers were asked')
  assert.equal(failure.code, 'IDFORGE_SOURCE_UNAVAILABLE', failure.message)
  assert.match(failure.message, /could meet/)
})
