#!/usr/bin/env bash
# The JVM binding (bindings/uniffi): builds the library, generates the Kotlin sources with
# uniffi-bindgen (library mode; they are reproducible, so they are not committed), compiles them
# with the Kotlin compiler of the npm package kotlin-compiler, then runs the Kotlin tests
# (bindings/uniffi/tests/IdforgeTest.kt) and the Java caller against the built library.
#
#   ci/jvm.sh            build, generate, compile, test
#   ci/jvm.sh --release  the same on a release build of the library
#
# Installs what it needs: JDK 17, JNA and Gson from Debian (ci/install-deps.sh jvm) and
# kotlin-compiler (pinned) from the npm registry into $IDFORGE_CACHE/kotlin.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
KOTLIN_VERSION=2.4.20
PROFILE=debug
CARGO_PROFILE=()
if [ "${1:-}" = "--release" ]; then
  PROFILE=release
  CARGO_PROFILE=(--release)
fi

bash ci/install-deps.sh jvm
KOTLIN_HOME="$CACHE/kotlin/node_modules/kotlin-compiler"
if [ "$(cat "$KOTLIN_HOME/.idforge-version" 2>/dev/null)" != "$KOTLIN_VERSION" ]; then
  echo "    installing kotlin-compiler@$KOTLIN_VERSION (npm)"
  mkdir -p "$CACHE/kotlin"
  npm install --silent --no-save --no-audit --no-fund --prefix "$CACHE/kotlin" \
    "kotlin-compiler@$KOTLIN_VERSION" >/dev/null
  echo "$KOTLIN_VERSION" >"$KOTLIN_HOME/.idforge-version"
fi
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
  -d "$OUT/tests.jar" bindings/uniffi/tests/IdforgeTest.kt
javac -d "$OUT/java" -cp "$OUT/idforge.jar:$KLIB/kotlin-stdlib.jar" bindings/uniffi/tests/JavaCaller.java

CP="$OUT/idforge.jar:$JNA:$KLIB/kotlin-stdlib.jar"
JAVA=(java -Djna.library.path="$LIBDIR" -Didforge.testdata=core/testdata)
echo "    Kotlin tests"
"${JAVA[@]}" -cp "$CP:$OUT/tests.jar:$GSON:$KLIB/kotlin-test.jar" IdforgeTestKt
echo "    Java caller"
"${JAVA[@]}" -cp "$CP:$OUT/java" JavaCaller
