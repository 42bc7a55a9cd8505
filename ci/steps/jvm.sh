#!/usr/bin/env bash
# The JVM binding (bindings/uniffi): builds the library, generates the Kotlin sources with
# uniffi-bindgen (library mode; they are reproducible, so they are not committed), compiles them
# with the Kotlin compiler of the npm package kotlin-compiler, then runs the Kotlin tests
# (bindings/uniffi/tests/IdforgeTest.kt with TimeOrderedTest.kt), the Java caller and JdbcTest (the
# ids in PostgreSQL and SQLite through Debian's JDBC drivers) against the built library, and the JVM guide's Java program (examples/java/App.java) as a user runs it: the jar with the native
# library inside (as ci/dist/dist.sh makes it), JNA and the Kotlin stdlib, no jna.library.path. It
# checks that docs/jvm.md shows that program as it is and that the Maven coordinates it and
# packaging/jvm/pom.xml give are the versions used here.
#
#   ci/steps/jvm.sh            build, generate, compile, test
#   ci/steps/jvm.sh --release  the same on a release build of the library
#
# Installs what it needs: JDK 17, JNA, Gson and the JDBC drivers from Debian (ci/install/install-deps.sh jvm) and
# kotlin-compiler (pinned) from the npm registry into $IDFORGE_CACHE/kotlin (ci/install/install-kotlin.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
PROFILE=debug
CARGO_PROFILE=()
if [ "${1:-}" = "--release" ]; then
  PROFILE=release
  CARGO_PROFILE=(--release)
fi

bash ci/install/install-deps.sh jvm
KOTLIN_HOME="$(bash ci/install/install-kotlin.sh)"
KOTLIN_VERSION="$(cat "$KOTLIN_HOME/.idforge-version")"
KOTLINC="$KOTLIN_HOME/bin/kotlinc"
KLIB="$KOTLIN_HOME/lib"
JNA=/usr/share/java/jna.jar
GSON=/usr/share/java/gson.jar

echo "    cargo build -p idforge-uniffi ($PROFILE), uniffi-bindgen"
cargo build --locked -q -p idforge-uniffi "${CARGO_PROFILE[@]}"
cargo build --locked -q --manifest-path bindings/uniffi/bindgen/Cargo.toml
LIBDIR="$CARGO_TARGET_DIR/$PROFILE"
OUT="$CARGO_TARGET_DIR/jvm"
rm -rf "$OUT"
mkdir -p "$OUT/java"

echo "    uniffi-bindgen generate --language kotlin"
"$CARGO_TARGET_DIR/debug/uniffi-bindgen" generate --no-format --language kotlin \
  --library "$LIBDIR/libidforge_uniffi.so" --out-dir "$OUT/gen" >/dev/null

echo "    kotlinc: idforge.jar, tests"
"$KOTLINC" -nowarn -jvm-target 17 -cp "$JNA" -d "$OUT/idforge.jar" \
  "$OUT/gen/dev/idforge/idforge_uniffi.kt" bindings/uniffi/kotlin/*.kt
"$KOTLINC" -nowarn -jvm-target 17 -cp "$OUT/idforge.jar:$GSON:$KLIB/kotlin-test.jar" \
  -d "$OUT/tests.jar" bindings/uniffi/tests/IdforgeTest.kt bindings/uniffi/tests/TimeOrderedTest.kt
javac -d "$OUT/java" -cp "$OUT/idforge.jar:$KLIB/kotlin-stdlib.jar" bindings/uniffi/tests/JavaCaller.java

CP="$OUT/idforge.jar:$JNA:$KLIB/kotlin-stdlib.jar"
JAVA=(java -Djna.library.path="$LIBDIR" -Didforge.testdata=core/testdata)
echo "    Kotlin tests"
"${JAVA[@]}" -cp "$CP:$OUT/tests.jar:$GSON:$KLIB/kotlin-test.jar" IdforgeTestKt
echo "    Java caller"
"${JAVA[@]}" -cp "$CP:$OUT/java" JavaCaller
echo "    JDBC: the ids in PostgreSQL and SQLite through Debian's drivers"
javac -d "$OUT/jdbc" -cp "$OUT/idforge.jar:$KLIB/kotlin-stdlib.jar:$GSON" bindings/uniffi/tests/JdbcTest.java
"${JAVA[@]}" -cp "$CP:$OUT/jdbc:$GSON:/usr/share/java/postgresql.jar:/usr/share/java/sqlite-jdbc.jar" JdbcTest

echo "    Java example (examples/java/App.java): the jar with its native library, JNA, kotlin-stdlib"
# JNA finds a library it cannot find on the system in the class path, under its platform's folder:
# the release jar carries it there (ci/dist/dist.sh), so users need no -Djna.library.path.
case "$(uname -m)" in
  x86_64) JNA_PLATFORM=linux-x86-64 ;;
  aarch64) JNA_PLATFORM=linux-aarch64 ;;
  *) JNA_PLATFORM="linux-$(uname -m)" ;;
esac
mkdir -p "$OUT/native/$JNA_PLATFORM" "$OUT/example"
cp "$LIBDIR/libidforge_uniffi.so" "$OUT/native/$JNA_PLATFORM/"
cp "$OUT/idforge.jar" "$OUT/idforge-release.jar"
jar --update --file "$OUT/idforge-release.jar" -C "$OUT/native" .
javac -d "$OUT/example" -cp "$OUT/idforge-release.jar:$KLIB/kotlin-stdlib.jar" examples/java/App.java
# Segments against the test services' server when ci/services.sh started it, else in memory.
example_out="$(java -cp "$OUT/idforge-release.jar:$JNA:$KLIB/kotlin-stdlib.jar:$OUT/example" App \
  "${IDFORGE_TEST_IDFORGE_URL:-memory:}")"
echo "$example_out" | sed 's/^/      /'
for line in '^snowflake [0-9]+ made at 20' '^ObjectId [0-9a-f]{24} made at 20' \
  '^flake-128 [0-9A-Za-z]{22} = UUID ' '^error INVALID_HEX$' '^order [0-9]+$'; do
  grep -Eq "$line" <<<"$example_out" || { echo "error: App printed no line matching $line" >&2; exit 1; }
done

# The JVM guide (docs/jvm.md) shows the program as it is, and its coordinates are the versions tested here.
python3 - "$KOTLIN_VERSION" "$(dpkg-query -W -f '${Version}' libjna-java | sed 's/-[^-]*$//')" <<'PY'
import re
import sys

kotlin, jna = sys.argv[1], sys.argv[2]
readme = open("docs/jvm.md", encoding="utf-8").read()
program = open("examples/java/App.java", encoding="utf-8").read()
problems = []
if not re.search(r"```java[^\n]*\n" + re.escape(program) + "```", readme):
    problems.append("docs/jvm.md does not show examples/java/App.java as it is (a ```java block)")
pom = open("packaging/jvm/pom.xml", encoding="utf-8").read()
for group, artifact, version in [
    ("net.java.dev.jna", "jna", jna),
    ("org.jetbrains.kotlin", "kotlin-stdlib", kotlin),
]:
    dep = rf"<groupId>{re.escape(group)}</groupId>\s*<artifactId>{artifact}</artifactId>\s*<version>{re.escape(version)}</version>"
    if not re.search(dep, pom):
        problems.append(f"packaging/jvm/pom.xml: no dependency {group}:{artifact}:{version}")
    if f"{group}:{artifact}:{version}" not in readme:
        problems.append(f"docs/jvm.md does not name {group}:{artifact}:{version}")
for p in problems:
    print(f"error: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
