"""Python UUIDv7 benchmarks: idforge.uuid7() (a real uuid.UUID) against uuid_utils.uuid7() (its
own UUID type), uuid_utils.compat.uuid7() (a uuid.UUID, like ours) and the standard library's
uuid.uuid4(), with ULIDs beside them.

    bench/python/run.sh uuid7     # installs the peers into a venv, runs both modes, reports

Two measurements of the same calls:
    bench_uuid7.py -o out.json         pyperf (one id per call, the id dropped at once)
    bench_uuid7.py --loops out.json    a plain loop that keeps every id in a list, as a user's
                                       loop does (best of 7 rounds of 1,000,000 calls, the
                                       cases interleaved within each round)
"""
import gc
import json
import sys
import time


def cases():
    import uuid

    import ulid
    import uuid_utils
    import uuid_utils.compat

    import idforge

    ours = idforge.Uuid7s()
    ulids = idforge.Ulids()
    return {
        "floor/no-op native call": idforge._native._noop,
        "idforge/uuid7()": idforge.uuid7,
        "idforge/Uuid7s.next()": ours.next,
        "idforge/ulid()": idforge.ulid,
        "idforge/Ulids.next()": ulids.next,
        "peer/uuid_utils.uuid7()": uuid_utils.uuid7,
        "peer/uuid_utils.compat.uuid7()": uuid_utils.compat.uuid7,
        "peer/uuid.uuid4()": uuid.uuid4,
        "peer/str(python-ulid ULID())": lambda: str(ulid.ULID()),
    }


LOOP_N = 1_000_000
LOOP_ROUNDS = 7


def timed_loop(fn, n):
    """ns per call of one loop of n calls keeping every id; the list is dropped on return."""
    out = [None] * n
    t0 = time.perf_counter_ns()
    for i in range(n):
        out[i] = fn()
    return (time.perf_counter_ns() - t0) / n


def plain_loops(path):
    best = {name: float("inf") for name in cases()}
    fns = cases()
    for _ in range(LOOP_ROUNDS):
        for name, fn in fns.items():
            gc.collect()  # no round pays for another's garbage
            best[name] = min(best[name], timed_loop(fn, LOOP_N))
    with open(path, "w") as f:
        json.dump({"python": sys.version.split()[0], "n": LOOP_N, "rounds": LOOP_ROUNDS, "ns": best}, f, indent=2)
    for name, ns in best.items():
        print(f"  {name:36} {ns:8.1f} ns/call (plain loop)")


def main():
    if sys.argv[1:2] == ["--loops"]:
        plain_loops(sys.argv[2])
        return
    import pyperf

    runner = pyperf.Runner()
    for name, fn in cases().items():
        runner.bench_func(name, fn)


if __name__ == "__main__":
    main()
