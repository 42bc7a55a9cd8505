#!/usr/bin/env bash
# Installs idforge by name from the registries of ci/release/registries.sh (after
# ci/release/release.sh --publish to them), each in an empty folder with a scratch HOME and the
# system's PATH, exactly as a user would, with only the registry as a source for idforge, and runs
# a program that prints ids:
#   pypi    `pip install idforge` in a new venv: the wheel of this machine, not the sdist; on
#           aarch64 the same in the arm64 root under qemu (when dist/ has the aarch64 wheel)
#   npm     `npm install idforge`: one platform package installed, the other not; with
#           --omit=optional, require() fails with IDFORGE_UNSUPPORTED_PLATFORM naming the
#           supported platforms
#   crates  `cargo add idforge` (the registry as `idforge-local`) and the crate README's program
#   maven   docs/jvm.md's pom.xml and App.java built by `mvn package` from the coordinates
#           dev.idforge:idforge-jvm:VERSION (JNA and the Kotlin stdlib through its pom), run; every
#           published file's checksums and signature checked (IDFORGE_MAVEN_SIGNING_KEY)
#   go      `go get idforge.dev/idforge@vVERSION` from the file proxy, GOFLAGS=-mod=mod, no
#           PKG_CONFIG_PATH, no C library installed: docs/go.md's program runs (segments from
#           memory:) and links no libidforge
# The registries' variables (`registries.sh start` prints them) must be in the environment.
#
#   ci/release/by-name-test.sh [crates pypi npm maven go]...   (default: all)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo="$PWD"
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/target}"
SYSTEM_PATH=/usr/local/bin:/usr/bin:/bin
version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
dist="${IDFORGE_DIST_DIR:-$repo/dist}"
selected=("$@")
[ "${#selected[@]}" -gt 0 ] || selected=(crates pypi npm maven go)
for v in IDFORGE_PYPI_INDEX IDFORGE_NPM_REGISTRY IDFORGE_CARGO_INDEX IDFORGE_MAVEN_URL IDFORGE_GO_PROXY_DIR; do
  [ -n "${!v:-}" ] || { echo "error: $v is not set: start the registries (ci/release/registries.sh)" >&2; exit 2; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home"
# user DIR CMD...: CMD in DIR with a user's environment: the system's PATH, a scratch HOME.
user() {
  local d="$1"
  shift
  (cd "$d" && exec env -i PATH="$SYSTEM_PATH" HOME="$work/home" LANG=C.UTF-8 npm_config_update_notifier=false "$@")
}
fail() { echo "error: $*" >&2; exit 1; }

test_pypi() {
  local app="$work/py"
  mkdir -p "$app"
  user "$app" /usr/bin/python3 -m venv venv
  local log
  log="$(user "$app" venv/bin/pip install --disable-pip-version-check --no-cache-dir \
    --index-url "$IDFORGE_PYPI_INDEX" idforge 2>&1)" || { echo "$log" >&2; fail "pip install idforge"; }
  grep -q "idforge-$version-cp39-abi3-manylinux.*x86_64.whl" <<<"$log" ||
    { echo "$log" >&2; fail "pip did not take the x86_64 wheel"; }
  user "$app" venv/bin/python -c '
import idforge
g = idforge.Snowflake("twitter", node_id=7)
a, b = g.next(), g.next()
assert a < b, (a, b)
print("pypi: pip install idforge", idforge.__version__, a)
assert idforge.__version__ == "'"$version"'"
'
  # idforge alone pulls in no framework: its integrations are extras (idforge[sqlalchemy], …).
  local installed
  installed="$(user "$app" venv/bin/pip list --disable-pip-version-check --format=freeze --exclude pip --exclude setuptools)"
  [ "$installed" = "idforge==$version" ] || fail "pip install idforge installed more than idforge: $installed"
  # Where no wheel fits, pip builds the sdist: without Rust, it stops with the documented message
  # (python/build_backend), not maturin's attempt to download a toolchain.
  # (PATH: the venv alone, as Debian's cargo may be in /usr/bin.)
  local sdist_log
  if sdist_log="$(cd "$app" && env -i PATH="$app/venv/bin" HOME="$work/home" LANG=C.UTF-8 \
    venv/bin/pip install --disable-pip-version-check --no-cache-dir \
    --index-url "$IDFORGE_PYPI_INDEX" --no-binary idforge --force-reinstall idforge 2>&1)"; then
    fail "pip built the sdist with no cargo on PATH"
  fi
  grep -q 'building idforge from source needs Rust, and `cargo` is not on PATH' <<<"$sdist_log" ||
    { echo "$sdist_log" >&2; fail "the sdist without Rust did not say that Rust is missing"; }
  echo "pypi: the sdist, where no wheel fits and without cargo: 'building idforge from source needs Rust'"
  local arm_wheel
  arm_wheel="$(ls "$dist"/idforge-"$version"-*aarch64*.whl 2>/dev/null | head -1 || true)"
  if [ -z "$arm_wheel" ]; then
    echo "pypi: no aarch64 wheel in $dist: not tried under emulation"
    return
  fi
  # The arm64 root (ci/dist/arm64-root.sh), the host's loopback: the same index.
  local arm="$work/py-arm"
  mkdir -p "$arm"
  bash ci/dist/arm64-root.sh run --bind "$work" -- env -i PATH="$SYSTEM_PATH" HOME="$work/home" LANG=C.UTF-8 \
    sh -c "cd '$arm' && python3 -m venv venv && venv/bin/pip install --disable-pip-version-check \
      --no-cache-dir --index-url '$IDFORGE_PYPI_INDEX' idforge >pip.log 2>&1 || { cat pip.log; exit 1; }
      grep -q 'manylinux.*aarch64.whl' pip.log || { cat pip.log; echo 'not the aarch64 wheel'; exit 1; }
      venv/bin/python -c 'import idforge, platform; print(\"pypi (aarch64):\", platform.machine(), idforge.Snowflake(node_id=7).next())'"
}

test_npm() {
  local app="$work/npm"
  mkdir -p "$app"
  printf '{ "name": "app", "version": "1.0.0", "private": true }\n' >"$app/package.json"
  user "$app" npm install --no-audit --no-fund --registry "$IDFORGE_NPM_REGISTRY" idforge >/dev/null
  [ -d "$app/node_modules/idforge-linux-x64-gnu" ] || fail "npm installed no idforge-linux-x64-gnu"
  [ ! -e "$app/node_modules/idforge-linux-arm64-gnu" ] || fail "npm installed the arm64 package on x86_64"
  [ -z "$(find "$app/node_modules/idforge" -name '*.node')" ] || fail "the idforge package carries an addon"
  user "$app" node -e '
const { Snowflake, ObjectId } = require("idforge")
const g = new Snowflake({ nodeId: 7 })
const a = g.next(), b = g.next()
if (!(a < b)) throw new Error("ids out of order")
console.log("npm: npm install idforge", require("idforge/package.json").version, a, new ObjectId().toHexString())
'
  local sizes
  sizes="$(du -sb "$app"/node_modules/idforge-linux-* | awk '{printf "%s %d bytes; ", $2, $1}')"
  echo "npm: installed ${sizes//$app\/node_modules\//}"
  # Without its platform package, the message names what is supported.
  local bare="$work/npm-bare"
  mkdir -p "$bare"
  cp "$app/package.json" "$bare/"
  user "$bare" npm install --no-audit --no-fund --omit=optional --registry "$IDFORGE_NPM_REGISTRY" idforge >/dev/null
  user "$bare" node -e '
try { require("idforge"); throw new Error("require(\"idforge\") worked without an addon") } catch (e) {
  if (e.code !== "IDFORGE_UNSUPPORTED_PLATFORM") throw e
  const { optionalDependencies } = require("idforge/package.json")
  for (const p of Object.keys(optionalDependencies)) {
    if (!e.message.includes(p.slice("idforge-".length))) throw new Error(`no ${p} in the message: ${e.message}`)
  }
  console.log("npm: without the platform package:", e.message.split(". ")[0] + ". " + e.message.split(". ")[1] + ".")
}'
}

test_crates() {
  local app="$work/rs"
  mkdir -p "$app/src" "$app/.cargo"
  printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2024"\n\n[dependencies]\n\n[workspace]\n' >"$app/Cargo.toml"
  printf '[registries.idforge-local]\nindex = "%s"\n' "$IDFORGE_CARGO_INDEX" >"$app/.cargo/config.toml"
  # The program of the crate's README (runtime/README.md), as written.
  python3 ci/docs/doc_block.py runtime/README.md '# idforge' rust "$version" >"$app/src/main.rs"
  # cargo from the machine's toolchain (rustup's proxies are not on the system PATH), the shared
  # target dir (a user's first build takes minutes; the ids are what is tested).
  local cargo_env=(PATH="$(dirname "$(command -v cargo)"):$SYSTEM_PATH" CARGO_TARGET_DIR="$CARGO_TARGET_DIR/by-name")
  cargo_env+=(CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}")
  user "$app" "${cargo_env[@]}" cargo add --quiet --registry idforge-local idforge
  grep -q "^idforge = { version = \"$version\", registry = \"idforge-local\" }" "$app/Cargo.toml" ||
    { cat "$app/Cargo.toml" >&2; fail "cargo add did not add idforge $version from the registry"; }
  local out
  out="$(user "$app" "${cargo_env[@]}" cargo run --quiet)"
  grep -Eq '^[0-9]+ was made at [0-9]+ ms$' <<<"$out" || { echo "$out" >&2; fail "the README program printed no id"; }
  echo "crates: cargo add idforge; the README's program printed: $(tr '\n' ' ' <<<"$out")"
}

test_go() {
  # shellcheck source=ci/install/go-env.sh
  . ci/install/go-env.sh
  local app="$work/go" gobin
  gobin="$(dirname "$(command -v go)")"
  mkdir -p "$app"
  # The program of docs/go.md, as written, with the in-process segment source.
  python3 ci/docs/doc_block.py docs/go.md '# Use from Go' go "$version" >"$app/main.go"
  local go_env=(PATH="$gobin:$SYSTEM_PATH" GOPROXY="file://$IDFORGE_GO_PROXY_DIR" GOSUMDB=off GOFLAGS=-mod=mod
    GOTOOLCHAIN=local GOPATH="$work/gopath" GOCACHE="$work/gocache" CGO_ENABLED=1)
  user "$app" "${go_env[@]}" go mod init app >/dev/null 2>&1
  user "$app" "${go_env[@]}" go get "idforge.dev/idforge@v$version" 2>&1 | sed 's/^/    /'
  user "$app" "${go_env[@]}" go build -o app .
  ! ldd "$app/app" | grep -q libidforge || fail "the Go program links a libidforge at run time"
  local out
  out="$(user "$app" "${go_env[@]}" ./app memory:)"
  grep -q '^snowflake [0-9]* node 7 made at' <<<"$out" || { echo "$out" >&2; fail "the Go program printed no snowflake"; }
  echo "go: go get idforge.dev/idforge; docs/go.md's program printed: $(head -2 <<<"$out" | tr '\n' ' ')"
  local zip
  zip="$(find "$IDFORGE_GO_PROXY_DIR" -name "v$version.zip")"
  echo "go: the module zip is $(stat -c %s "$zip") bytes"
}

test_maven() {
  bash ci/install/install-deps.sh maven
  local app="$work/maven" central="$work/central" kotlin stdlib
  mkdir -p "$app/src/main/java"
  # Maven Central's copy of the Kotlin stdlib, which Debian's repository lacks: the jar of the
  # pinned kotlin-compiler (the one every JVM test uses), with a pom of its coordinates.
  kotlin="$(bash ci/install/install-kotlin.sh)"
  stdlib="$central/org/jetbrains/kotlin/kotlin-stdlib/2.4.20"
  mkdir -p "$stdlib"
  cp "$kotlin/lib/kotlin-stdlib.jar" "$stdlib/kotlin-stdlib-2.4.20.jar"
  printf '%s%s\n' '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>' \
    '<groupId>org.jetbrains.kotlin</groupId><artifactId>kotlin-stdlib</artifactId><version>2.4.20</version></project>' \
    >"$stdlib/kotlin-stdlib-2.4.20.pom"
  # The user's settings: the idforge registry, the stand-in for Central, and Debian's Maven
  # repository for Maven's own plugins and JNA (CI reaches no Central).
  cat >"$work/maven-settings.xml" <<SETTINGS
<settings>
  <localRepository>$work/m2</localRepository>
  <mirrors><mirror><id>debian</id><mirrorOf>central</mirrorOf><url>file:///usr/share/maven-repo</url></mirror></mirrors>
  <profiles><profile><id>registries</id><repositories>
    <repository><id>idforge</id><url>$IDFORGE_MAVEN_URL</url><releases><checksumPolicy>fail</checksumPolicy></releases></repository>
    <repository><id>central-kotlin</id><url>file://$central</url></repository>
  </repositories></profile></profiles>
  <activeProfiles><activeProfile>registries</activeProfile></activeProfiles>
</settings>
SETTINGS
  # The project: docs/jvm.md's pom.xml and App.java, as written.
  python3 ci/docs/doc_block.py docs/jvm.md '**Maven**' xml "$version" >"$app/pom.xml"
  python3 ci/docs/doc_block.py docs/jvm.md "The release's" java "$version" >"$app/src/main/java/App.java"
  local mvn=(mvn --batch-mode --no-transfer-progress -Dstyle.color=never -s "$work/maven-settings.xml")
  user "$app" "${mvn[@]}" package dependency:build-classpath -Dmdep.outputFile=classpath.txt \
    >"$work/mvn.log" 2>&1 || { tail -40 "$work/mvn.log" >&2; fail "mvn package of docs/jvm.md's Java program"; }
  local out
  out="$(user "$app" java -cp "target/app-1.jar:$(cat "$app/classpath.txt")" App memory:)"
  grep -q '^snowflake [0-9]* made at' <<<"$out" || { echo "$out" >&2; fail "the Java program printed no snowflake"; }
  grep -q '^order 1$' <<<"$out" || { echo "$out" >&2; fail "the Java program printed no segment id"; }
  # Every file as published: its checksums, and its signature by the release's key.
  local dir="${IDFORGE_MAVEN_URL#file://}/dev/idforge/idforge-jvm/$version" f a keyring
  keyring="$work/maven-keyring.gpg"
  gpg --batch --quiet --no-default-keyring --keyring "$keyring" --homedir "$work" \
    --import "${IDFORGE_MAVEN_SIGNING_KEY:?is not set (local-release.sh sets it)}" 2>/dev/null
  for f in "$dir"/*.jar "$dir"/*.pom; do
    for a in md5 sha1 sha256 sha512; do
      [ "$("${a}sum" "$f" | cut -d' ' -f1)" = "$(cat "$f.$a")" ] || fail "$(basename "$f").$a does not match"
    done
    gpgv --keyring "$keyring" "$f.asc" "$f" 2>/dev/null ||
      fail "$(basename "$f").asc does not verify with the release's key"
  done
  echo "maven: dev.idforge:idforge-jvm:$version by its coordinates (mvn package; $(find "$dir" -type f | wc -l) files, each checksum and signature checked); docs/jvm.md's App printed: $(head -1 <<<"$out")"
}

for r in "${selected[@]}"; do
  case "$r" in
    crates | pypi | npm | maven | go) "test_$r" ;;
    *) fail "unknown registry '$r' (crates pypi npm maven go)" ;;
  esac
done
