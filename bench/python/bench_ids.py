"""Python benchmarks: idforge against its peers and a no-op native call, in one pyperf run.

    bench/python/run.sh            # installs the peers into a venv, runs this, prints ratios

Each benchmark makes one id per call (or one batch for next_many), as a user would.
"""
import pyperf

import idforge


def setup_peers():
    peers = {}
    from snowflake import SnowflakeGenerator  # snowflake-id

    gen = SnowflakeGenerator(1)
    peers["peer/snowflake-id next(gen)"] = lambda: next(gen)
    import bson

    peers["peer/pymongo bson.ObjectId()"] = bson.ObjectId
    import uuid_utils

    peers["peer/uuid_utils.uuid7()"] = uuid_utils.uuid7
    import ulid

    peers["peer/python-ulid ULID()"] = ulid.ULID
    import uuid

    peers["peer/uuid.uuid4()"] = uuid.uuid4
    return peers


def main():
    runner = pyperf.Runner()
    # A layout with 22 sequence bits (4 M ids a ms): one Python thread makes ids faster than
    # Twitter's 4,096 a ms (12 bits), and past the 1 s lead the loop would time the clock's pace,
    # not the call. The call's code is the same for every layout. (snowflake-id stays under its
    # 4,096 a ms, so it never waits.)
    wide = idforge.Layout(1_577_836_800_000, 1, 41, 0, 22)
    snow = idforge.Snowflake(wide, node_id=0)
    flake = idforge.Flake128Generator()
    runner.bench_func("floor/no-op native call", idforge._native._noop)
    runner.bench_func("idforge/Snowflake.next()", snow.next)
    runner.bench_func("idforge/ObjectId()", idforge.ObjectId)
    runner.bench_func("idforge/Flake128Generator.next()", flake.next)
    runner.bench_func("idforge/Flake128()", idforge.Flake128)
    # The same wide layout: Twitter's 12 bits cap any generator at 4.096 M ids/s, far below
    # what next_many can make.
    many = idforge.Snowflake(wide, node_id=0)
    runner.bench_func("idforge/Snowflake.next_many(100000) per call", many.next_many, 100_000)
    for name, fn in setup_peers().items():
        runner.bench_func(name, fn)


if __name__ == "__main__":
    main()
