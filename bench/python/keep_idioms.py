"""Kept ids in three loop idioms, ours against uuid_utils: the verdict's loop (a list made
first, then filled: bench_uuid7.py --loops), a list comprehension and append. The collector
walks a young list when GC objects are allocated (ours are uuid.UUID; uuid_utils' are not),
so the first idiom costs ours the most.

    python keep_idioms.py        best of 5 x 1,000,000 calls each, ns per call and the ratio
"""
import gc
import time

import uuid_utils
from bench_uuid7 import timed_loop

import idforge

N = 1_000_000
ROUNDS = 5


def filled(f):
    return timed_loop(f, N)  # the verdict's loop itself


def comprehension(f):
    t0 = time.perf_counter_ns()
    out = [f() for _ in range(N)]
    ns = (time.perf_counter_ns() - t0) / N
    del out
    return ns


def appended(f):
    out = []
    add = out.append
    t0 = time.perf_counter_ns()
    for _ in range(N):
        add(f())
    return (time.perf_counter_ns() - t0) / N


def main():
    fns = {"ours": idforge.uuid7, "uuid_utils": uuid_utils.uuid7}
    idioms = {"list filled": filled, "comprehension": comprehension, "append": appended}
    best = {}
    for _ in range(ROUNDS):
        for idiom, run in idioms.items():
            for name, f in fns.items():
                gc.collect()
                key = (idiom, name)
                best[key] = min(best.get(key, float("inf")), run(f))
    for idiom in idioms:
        ours, theirs = best[(idiom, "ours")], best[(idiom, "uuid_utils")]
        print(f"{idiom:14} ours {ours:6.1f} ns  uuid_utils {theirs:6.1f} ns  speed-up {theirs / ours:.2f}x")


if __name__ == "__main__":
    main()
