#!/usr/bin/env python3
"""Gives each tracked file of a fresh clone the modification time of the run that first saw its
content, so that cargo (which decides by modification times whether a crate of the workspace
must be rebuilt) rebuilds only what changed since the cached builds.

    ci/mtimes.py CACHE_DIR TARGET_DIR

A clone gives every file the time of the clone, newer than every cached build, so every crate
of the workspace was rebuilt in every profile and target of every run (about twenty release
builds). The record, CACHE_DIR/mtimes-<hash of the clone's path>.json, holds each file's
SHA-256 and the time it was given; a file whose content is the recorded one gets that time
back, any other keeps the clone's time and is recorded with it.

Why this is safe: a restored time is the time the file's content first came into a run at this
path, so every build made before it used other content (or did not exist) and is older than the
file: cargo rebuilds it. A build made after it used this very content, or a content recorded
after it, which changes the record (the latest content only is kept). Cargo's fingerprints for
dependencies from a registry are unchanged: they never looked at times.

The record belongs to one state of the builds: a token, new at each run, is written in it and in
TARGET_DIR/.idforge-mtimes-token. When the two differ (the record or the builds restored from a
backup, copied from another machine, or one of them removed), nothing is restored: every file
keeps the clone's time and every crate is rebuilt, as without this script. A recorded time in
the future (a clock set back since) is not restored either. A clock set back between two runs
can still make a changed file look older than a build of the run before, as it could before this
script (every file of a clone then had such a time).
"""
import hashlib
import json
import os
import subprocess
import sys
import time
import uuid


def main() -> int:
    cache, target = sys.argv[1], sys.argv[2]
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                          check=True).stdout.strip()
    key = hashlib.sha256(root.encode()).hexdigest()[:16]
    os.makedirs(cache, exist_ok=True)
    path = os.path.join(cache, f"mtimes-{key}.json")
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        record = {}
    if not isinstance(record, dict) or not isinstance(record.get("files", {}), dict):
        record = {}
    token_path = os.path.join(target, ".idforge-mtimes-token")
    try:
        with open(token_path, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError:
        token = None
    # The first record (before tokens) and builds without a token are taken as one state once.
    in_step = record.get("token") == token or ("token" not in record and token is None)
    files_seen = record.get("files", record if "token" not in record else {}) if in_step else {}
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True,
                           check=True).stdout.split(b"\0")
    now_ns = time.time_ns()
    restored = kept = 0
    out = {}
    for name in (f.decode() for f in files if f):
        full = os.path.join(root, name)
        if os.path.islink(full) or not os.path.isfile(full):
            continue
        with open(full, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        seen = files_seen.get(name)
        if isinstance(seen, list) and len(seen) == 2 and seen[0] == digest and seen[1] <= now_ns:
            os.utime(full, ns=(seen[1], seen[1]))
            out[name] = seen
            restored += 1
        else:
            out[name] = [digest, os.stat(full).st_mtime_ns]
            kept += 1
    # The token first in the builds' folder, then the record: a failure between the two leaves
    # them different, so the next run restores nothing (safe).
    token = uuid.uuid4().hex
    os.makedirs(target, exist_ok=True)
    with open(token_path + ".tmp", "w", encoding="utf-8") as f:
        f.write(token + "\n")
    os.replace(token_path + ".tmp", token_path)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"token": token, "files": out}, f)
    os.replace(tmp, path)
    why = "" if in_step else "; the record and the builds differ (restored or removed): nothing restored"
    print(f"mtimes: {restored} files as the cache last saw them, {kept} new or changed ({path}{why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
