// Splits the npm package of ci/dist/dist.sh (idforge-VERSION.tgz, every platform's addon inside,
// for installs from the file) into what a registry serves, napi-rs's way:
//   idforge/                    the JavaScript, the types, no addon; each platform package an
//                               optional dependency of the exact version
//   idforge-linux-x64-gnu/ ...  one per addon: only that addon, with `os`, `cpu` and `libc`, so
//                               npm installs the one that matches the machine and skips the rest
// native.js (napi-rs's loader) requires the platform package by these names when the addon is
// not beside it.
//
//   node ci/release/npm-split.mjs UNPACKED_PACKAGE_DIR OUT_DIR
// OUT_DIR gets one folder per package, each ready for `npm pack` or `npm publish`.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const [src, out] = process.argv.slice(2)
if (!src || !out) {
  console.error('usage: node ci/release/npm-split.mjs UNPACKED_PACKAGE_DIR OUT_DIR')
  process.exit(2)
}

// napi-rs's platform names (idforge.PLATFORM.node) and what npm matches them on.
const PLATFORMS = {
  'linux-x64-gnu': { os: 'linux', cpu: 'x64', libc: 'glibc' },
  'linux-arm64-gnu': { os: 'linux', cpu: 'arm64', libc: 'glibc' },
  'linux-x64-musl': { os: 'linux', cpu: 'x64', libc: 'musl' },
  'linux-arm64-musl': { os: 'linux', cpu: 'arm64', libc: 'musl' },
  'win32-x64-gnu': { os: 'win32', cpu: 'x64' },
  'win32-x64-msvc': { os: 'win32', cpu: 'x64' },
  'darwin-x64': { os: 'darwin', cpu: 'x64' },
  'darwin-arm64': { os: 'darwin', cpu: 'arm64' },
}

const main = JSON.parse(readFileSync(join(src, 'package.json'), 'utf8'))
const addons = readdirSync(src).filter((f) => /^idforge\..+\.node$/.test(f)).sort()
if (addons.length === 0) {
  console.error(`error: ${src} holds no idforge.*.node addon`)
  process.exit(1)
}
const COMMON = ['README.md', 'CHANGELOG.md', 'LICENSE-MIT', 'LICENSE-APACHE']

rmSync(out, { recursive: true, force: true })
const optional = {}
for (const addon of addons) {
  const platform = addon.slice('idforge.'.length, -'.node'.length)
  const match = PLATFORMS[platform]
  if (!match) {
    console.error(`error: ${addon}: no npm os/cpu/libc known for platform '${platform}'`)
    process.exit(1)
  }
  const name = `${main.name}-${platform}`
  const dir = join(out, name)
  mkdirSync(dir, { recursive: true })
  cpSync(join(src, addon), join(dir, addon))
  for (const f of COMMON.slice(1)) cpSync(join(src, f), join(dir, f))
  writeFileSync(
    join(dir, 'README.md'),
    `# ${name}\n\nThe native addon of [idforge](https://www.npmjs.com/package/${main.name}) for ` +
      `${platform}. Install \`${main.name}\`, not this package: npm picks this one as an optional ` +
      `dependency on ${match.os} ${match.cpu}${match.libc ? ` (${match.libc})` : ''}.\n`,
  )
  const pkg = {
    name,
    version: main.version,
    description: `idforge's native addon for ${platform}`,
    license: main.license,
    keywords: main.keywords,
    main: addon,
    files: [addon, ...COMMON],
    os: [match.os],
    cpu: [match.cpu],
    ...(match.libc ? { libc: [match.libc] } : {}),
    engines: main.engines,
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n')
  optional[name] = main.version
}

// The main package: everything but the addons, the platform packages as optional dependencies
// (exact versions: the loader and the addon must come from one build), and no development
// fields a user's npm would read.
const dir = join(out, main.name)
mkdirSync(dir, { recursive: true })
for (const f of readdirSync(src)) {
  if (f.endsWith('.node') || f === 'node_modules' || f === 'package-lock.json') continue
  cpSync(join(src, f), join(dir, f), { recursive: true })
}
delete main.devDependencies
delete main.scripts
delete main.overrides
main.optionalDependencies = optional
main.files = main.files.filter((f) => !f.endsWith('.node'))
writeFileSync(join(dir, 'package.json'), JSON.stringify(main, null, 2) + '\n')
console.log([main.name, ...Object.keys(optional)].join('\n'))
