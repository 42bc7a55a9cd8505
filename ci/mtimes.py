#!/usr/bin/env python3
"""Gives each tracked file of a fresh clone the modification time of the run that first saw its
content, so that cargo (which decides by modification times whether a crate of the workspace
must be rebuilt) rebuilds only what changed since the cached builds.

    ci/mtimes.py CACHE_DIR

A clone gives every file the time of the clone, newer than every cached build, so every crate
of the workspace was rebuilt in every profile and target of every run (about twenty release
builds). The record, CACHE_DIR/mtimes-<hash of the clone's path>.json, holds each file's
SHA-256 and the time it was given; a file whose content is the recorded one gets that time
back, any other keeps the clone's time and is recorded with it.

Why this is safe: a restored time is the time the file's content first came into a run at this
path, so every build made before it used other content (or did not exist) and is older than the
file: cargo rebuilds it. A build made after it used this very content, or a content recorded
after it, which changes the record (the latest content only is kept). Cargo's fingerprints for
dependencies from a registry are unchanged: they never looked at times. With a clock that goes
back between two runs a changed file could look older than an old build: this script then keeps
the clone's time for every file whose recorded time is in the future.
"""
import hashlib
import json
import os
import subprocess
import sys
import time


def main() -> int:
    cache = sys.argv[1]
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
        seen = record.get(name)
        if seen and seen[0] == digest and seen[1] <= now_ns:
            os.utime(full, ns=(seen[1], seen[1]))
            out[name] = seen
            restored += 1
        else:
            out[name] = [digest, os.stat(full).st_mtime_ns]
            kept += 1
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(out, f)
    os.replace(tmp, path)
    print(f"mtimes: {restored} files as the cache last saw them, {kept} new or changed ({path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
