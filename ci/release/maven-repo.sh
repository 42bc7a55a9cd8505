#!/usr/bin/env bash
# The JVM library as a Maven repository holds it (the release command's `maven`):
#
#   ci/release/maven-repo.sh DIST OUT
#
# Makes OUT/dev/idforge/idforge-jvm/VERSION/ with DIST's idforge-jvm-VERSION.jar, .pom,
# -sources.jar and -javadoc.jar, each with .md5, .sha1, .sha256, .sha512 and an armoured .asc
# signature, and OUT/dev/idforge/idforge-jvm/maven-metadata.xml naming this version (with its
# checksums). This tree is what a Maven repository serves and what Maven Central's portal takes
# as a bundle (zip it from OUT). Checks first that the pom has what Central requires (name,
# description, url, licenses, developers, scm) and the version of the artifacts.
#
# The signing key: IDFORGE_GPG_KEY (an armoured secret key, or a file holding one) and
# IDFORGE_GPG_PASSPHRASE, imported into a keyring of this run only. IDFORGE_GPG_THROWAWAY=1
# (CI) makes a new key for this run instead. Either way the public key is written to
# OUT/../maven-signing-key.asc, and every signature is verified with it before the script ends.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

dist=$(realpath "${1:?usage: ci/release/maven-repo.sh DIST OUT}")
out=$(realpath -m "${2:?usage: ci/release/maven-repo.sh DIST OUT}")
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"
group=dev/idforge artifact=idforge-jvm
dir="$out/$group/$artifact/$version"
files=("$artifact-$version.jar" "$artifact-$version.pom" "$artifact-$version-sources.jar" "$artifact-$version-javadoc.jar")

for f in "${files[@]}"; do
  [ -f "$dist/$f" ] || { echo "error: no $dist/$f (ci/dist/dist.sh jvm)" >&2; exit 1; }
done
python3 - "$dist/$artifact-$version.pom" "$version" <<'EOF'
import sys
import xml.etree.ElementTree as ET

pom, version = sys.argv[1:3]
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
root = ET.parse(pom).getroot()
required = ("m:groupId", "m:artifactId", "m:version", "m:name", "m:description", "m:url",
            "m:licenses/m:license/m:name", "m:developers/m:developer/m:name", "m:scm/m:url",
            "m:scm/m:connection")
missing = [path for path in required
           if root.find(path, ns) is None or not (root.find(path, ns).text or "").strip()]
if missing:
    sys.exit(f"error: {pom} lacks what Maven Central requires: {', '.join(missing)}")
if root.find("m:version", ns).text != version:
    sys.exit(f"error: {pom} is version {root.find('m:version', ns).text}, not {version}")
EOF

# A keyring of this run only: the real key is imported, never kept.
export GNUPGHOME
GNUPGHOME=$(mktemp -d)
trap 'gpgconf --kill all >/dev/null 2>&1 || true; rm -rf "$GNUPGHOME"' EXIT
chmod 700 "$GNUPGHOME"
if [ "${IDFORGE_GPG_THROWAWAY:-}" = 1 ]; then
  gpg --batch --quiet --passphrase '' --quick-gen-key "idforge CI (throwaway) <ci@idforge.invalid>" ed25519 sign 1d
  passphrase=""
elif [ -n "${IDFORGE_GPG_KEY:-}" ]; then
  key="$IDFORGE_GPG_KEY"
  [ ! -f "$key" ] || key=$(cat "$key")
  gpg --batch --quiet --pinentry-mode loopback --passphrase "${IDFORGE_GPG_PASSPHRASE:-}" --import <<<"$key"
  passphrase="${IDFORGE_GPG_PASSPHRASE:-}"
else
  echo "error: no signing key: set IDFORGE_GPG_KEY and IDFORGE_GPG_PASSPHRASE (or IDFORGE_GPG_THROWAWAY=1)" >&2
  exit 1
fi

sums() { # sums FILE: the four checksum files Maven repositories carry
  local a
  for a in md5 sha1 sha256 sha512; do
    "${a}sum" "$1" | cut -d' ' -f1 | tr -d '\n' >"$1.$a"
  done
}

rm -rf "$dir"
mkdir -p "$dir"
for f in "${files[@]}"; do
  cp "$dist/$f" "$dir/$f"
  gpg --batch --quiet --pinentry-mode loopback --passphrase "$passphrase" --armor --detach-sign \
    --output "$dir/$f.asc" "$dir/$f"
  sums "$dir/$f"
done
gpg --batch --armor --export >"$(dirname "$out")/maven-signing-key.asc"
for f in "${files[@]}"; do
  gpg --batch --quiet --verify "$dir/$f.asc" "$dir/$f" 2>/dev/null ||
    { echo "error: the signature of $f does not verify" >&2; exit 1; }
done

metadata="$out/$group/$artifact/maven-metadata.xml"
cat >"$metadata" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<metadata>
  <groupId>${group//\//.}</groupId>
  <artifactId>$artifact</artifactId>
  <versioning>
    <latest>$version</latest>
    <release>$version</release>
    <versions>
      <version>$version</version>
    </versions>
    <lastUpdated>$(date -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)" +%Y%m%d%H%M%S)</lastUpdated>
  </versioning>
</metadata>
EOF
sums "$metadata"
echo "    maven: ${group//\//.}:$artifact:$version, ${#files[@]} files signed and summed ($(du -sb "$dir" | cut -f1) bytes)"
