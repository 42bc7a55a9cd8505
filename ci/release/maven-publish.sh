#!/usr/bin/env bash
# Sends the tree of ci/release/maven-repo.sh to a Maven repository (the release command's
# `maven` with --publish):
#
#   ci/release/maven-publish.sh TREE URL
#
# URL is file:///path (a repository directory, as CI's) or http(s)://… (a repository that takes
# HTTP PUT, as Nexus, Artifactory or Reposilite do; IDFORGE_MAVEN_USER and IDFORGE_MAVEN_PASSWORD
# are its credentials, passed to curl through a config on stdin, never on its command line).
# The version's files go first and the artifact's maven-metadata.xml last, merged with the one the
# repository has (every version it names stays named): a send that fails halfway leaves the
# metadata as it was, naming no version whose files are not all there. A version already there is
# refused (a release is never replaced). For Maven Central, upload TREE as a bundle instead
# (docs/release.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

tree=$(realpath "${1:?usage: ci/release/maven-publish.sh TREE URL}")
url="${2:?usage: ci/release/maven-publish.sh TREE URL}"
url="${url%/}"
meta_rel=$(cd "$tree" && find . -name maven-metadata.xml | sed 's#^\./##')
[ "$(wc -l <<<"$meta_rel")" = 1 ] || { echo "error: $tree holds not one maven-metadata.xml" >&2; exit 1; }
artifact_dir=$(dirname "$meta_rel")
version_dir=$(cd "$tree/$artifact_dir" && find . -mindepth 1 -maxdepth 1 -type d | sed 's#^\./##')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

curl_auth() { # curl with the credentials from the environment, kept off the command line
  printf 'user = "%s:%s"\n' "${IDFORGE_MAVEN_USER:-}" "${IDFORGE_MAVEN_PASSWORD:-}" |
    curl --silent --show-error --fail --config - "$@"
}

# The repository's metadata now (none: a first release).
case "$url" in
  file://*)
    repo="${url#file://}"
    [ ! -e "$repo/$artifact_dir/$version_dir" ] ||
      { echo "error: $artifact_dir/$version_dir is already in $url" >&2; exit 1; }
    [ ! -f "$repo/$meta_rel" ] || cp "$repo/$meta_rel" "$work/old.xml"
    ;;
  http://* | https://*)
    if curl_auth --head --output /dev/null "$url/$artifact_dir/$version_dir/$(basename "$artifact_dir")-$version_dir.pom" 2>/dev/null; then
      echo "error: $artifact_dir/$version_dir is already in $url" >&2
      exit 1
    fi
    # Only a 404 means "no metadata yet": any other failure stops the release, or the merged
    # metadata would drop every version the repository named. At most 1 MiB is read.
    code=$(curl_auth --max-filesize 1048576 --output "$work/old.xml" --write-out '%{http_code}' \
      "$url/$meta_rel" 2>/dev/null) || code="${code:-000}"
    case "$code" in
      200) ;;
      404) rm -f "$work/old.xml" ;;
      *) echo "error: $url/$meta_rel: HTTP $code (not 200 or 404); nothing was sent" >&2; exit 1 ;;
    esac
    ;;
  *) echo "error: $url is neither file:// nor http(s)://" >&2; exit 2 ;;
esac

# The merged metadata: every version either names, this one the latest.
python3 - "$tree/$meta_rel" "$work/old.xml" "$work/maven-metadata.xml" <<'EOF'
import os
import sys
import xml.etree.ElementTree as ET

new_path, old_path, out = sys.argv[1:4]
new = ET.parse(new_path).getroot()
versions = [v.text for v in new.iter("version") if v.text]
if os.path.exists(old_path):
    old = ET.parse(old_path).getroot()
    if old.findtext("groupId") != new.findtext("groupId") or old.findtext("artifactId") != new.findtext("artifactId"):
        sys.exit("error: the repository's maven-metadata.xml is of another artifact")
    versions = [v.text for v in old.iter("version") if v.text and v.text not in versions] + versions
listed = new.find("versioning/versions")
for v in list(listed):
    listed.remove(v)
for v in versions:
    ET.SubElement(listed, "version").text = v
ET.indent(new)
ET.ElementTree(new).write(out, encoding="UTF-8", xml_declaration=True)
EOF
for a in md5 sha1 sha256 sha512; do
  "${a}sum" "$work/maven-metadata.xml" | cut -d' ' -f1 | tr -d '\n' >"$work/maven-metadata.xml.$a"
done

case "$url" in
  file://*)
    mkdir -p "$repo/$artifact_dir"
    cp -r "$tree/$artifact_dir/$version_dir" "$repo/$artifact_dir/.$version_dir.new"
    mv "$repo/$artifact_dir/.$version_dir.new" "$repo/$artifact_dir/$version_dir"
    for f in "$work"/maven-metadata.xml.* "$work/maven-metadata.xml"; do
      cp "$f" "$repo/$artifact_dir/.$(basename "$f").new"
      mv "$repo/$artifact_dir/.$(basename "$f").new" "$repo/$artifact_dir/$(basename "$f")"
    done
    ;;
  *)
    for f in "$tree/$artifact_dir/$version_dir"/*; do
      curl_auth --upload-file "$f" --output /dev/null "$url/$artifact_dir/$version_dir/$(basename "$f")"
    done
    for f in "$work"/maven-metadata.xml.* "$work/maven-metadata.xml"; do
      curl_auth --upload-file "$f" --output /dev/null "$url/$artifact_dir/$(basename "$f")"
    done
    ;;
esac
echo "    maven: $artifact_dir/$version_dir published to $url"
