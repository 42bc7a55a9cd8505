"""Generators: order, decode, batches, threads, fork."""
import datetime as dt
import inspect
import multiprocessing
import os
import uuid
from array import array
from concurrent.futures import ThreadPoolExecutor

import pytest

import idforge


def test_snowflake_next_decode_and_batches():
    ids = idforge.Snowflake("twitter", node_id=7)
    a, b = ids.next(), ids.next()
    assert b > a
    parts = ids.decode(a)
    assert parts.node == 7 and parts.time.tzinfo is not None
    assert abs(parts.time - dt.datetime.now(dt.timezone.utc)) < dt.timedelta(seconds=5)
    many = ids.next_many(100_000)
    assert isinstance(many, array) and many.typecode == "Q" and len(many) == 100_000
    assert many[0] > b and all(x < y for x, y in zip(many, many[1:]))
    lo, hi = ids.bounds_at(parts.time)
    assert lo <= a <= hi
    assert ids.compose(parts.time, seq=parts.seq) == a


def test_policies_and_layout_objects():
    custom = idforge.Layout(1_600_000_000_000, 1, 41, 10, 12)
    w = idforge.Snowflake(custom, node_id=3, policy="wait", max_wait=0.05)
    assert w.decode(w.next()).node == 3
    assert idforge.Snowflake("sonyflake", node_id=65535, policy="error").node_id == 65535


def test_threads_no_duplicates():
    ids = idforge.Snowflake("twitter", node_id=1)
    # map: an exception in a thread fails the test (a bare Thread would only print it).
    with ThreadPoolExecutor(4) as pool:
        out = list(pool.map(lambda _: [ids.next() for _ in range(250_000)], range(4)))
    allids = [x for chunk in out for x in chunk]
    assert len(allids) == 1_000_000 and len(set(allids)) == 1_000_000


def test_objectid_value_semantics():
    a, b = idforge.ObjectId(), idforge.ObjectId()
    assert a != b and a < b and len({a, b, idforge.ObjectId(str(a))}) == 2
    assert idforge.ObjectId(str(a)) == a and idforge.ObjectId(bytes(a)) == a
    assert repr(a) == f"ObjectId('{a}')"
    assert abs(a.generation_time - dt.datetime.now(dt.timezone.utc)) < dt.timedelta(seconds=5)
    assert isinstance(idforge.ObjectId(a), idforge.ObjectId)


def test_flake128_values_and_generator():
    f = idforge.Flake128()
    assert isinstance(f.uuid, uuid.UUID) and idforge.Flake128.from_uuid(f.uuid) == f
    g = idforge.Flake128Generator(0xABCDEF)
    x, y = g.next(), g.next()
    assert x < y and x.worker == 0xABCDEF and isinstance(x, idforge.Flake128)
    with pytest.raises(idforge.NodeOutOfRangeError):
        idforge.Flake128Generator(1 << 48)


def test_segments_memory_and_file(tmp_path):
    s = idforge.Segments("memory:", "orders", step=100, dynamic_step=False)
    assert s.next() == 1
    many = s.next_many(5000)
    assert list(many) == list(range(2, 5002))
    assert s.stats()["ranges_fetched"] >= 50
    url = f"file://{tmp_path}"
    a = idforge.Segments(url, "t", step=50, dynamic_step=False)
    b = idforge.Segments(url, "t", step=50, dynamic_step=False)
    got = [a.next() for _ in range(1000)] + [b.next() for _ in range(1000)]
    assert len(set(got)) == 2000


def _child(url, conn):
    try:
        oids = [bytes(idforge.ObjectId()) for _ in range(100_000)]
        seg = idforge.Segments(url, "forked", step=1000)
        segs = list(seg.next_many(100_000))
        conn.send((oids, segs))
    finally:
        conn.close()


def test_fork_children_never_repeat(tmp_path):
    # The parent's generators exist before the fork: children must not share their state.
    url = f"file://{tmp_path}"
    parent_seg = idforge.Segments(url, "forked", step=1000)
    parent_seg.next()
    idforge.ObjectId()
    ctx = multiprocessing.get_context("fork")
    pipes, procs = [], []
    for _ in range(4):
        recv, send = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_child, args=(url, send))
        p.start()
        send.close()
        pipes.append(recv)
        procs.append(p)
    oids = [bytes(idforge.ObjectId()) for _ in range(100_000)]
    segs = list(parent_seg.next_many(100_000))
    for recv in pipes:
        child_oids, child_segs = recv.recv()
        oids += child_oids
        segs += child_segs
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert len(oids) == 500_000 and len(set(oids)) == 500_000
    assert len(segs) == 500_000 and len(set(segs)) == 500_000


def test_fixed_node_snowflake_raises_forked_in_child():
    ids = idforge.Snowflake("twitter", node_id=9)
    ids.next()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            ids.next()
            os.write(w, b"no error")
        except idforge.ForkedError:
            os.write(w, b"forked")
        except BaseException as e:  # noqa: BLE001 - report anything else to the parent
            os.write(w, repr(e).encode())
        finally:
            os._exit(0)
    os.close(w)
    assert os.read(r, 100) == b"forked"
    os.waitpid(pid, 0)
    os.close(r)
    assert ids.next() > 0


def test_next_is_a_checked_method():
    # Snowflake.next is a hand-made C method: CPython's descriptor must still check `self`.
    with pytest.raises(TypeError):
        idforge.Snowflake.next(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        idforge.Snowflake("twitter").next(1)  # type: ignore[call-arg]
    ids = idforge.Snowflake("twitter", node_id=5)
    assert str(inspect.signature(idforge.Snowflake.next)) == "(self, /)"
    assert idforge.Snowflake.next.__doc__ == "The next id."
    a = idforge.Snowflake.next(ids)
    b = ids.next()
    assert b > a and ids.decode(b).node == 5



def test_segment_stats_keys_are_the_stubs_typed_dicts():
    # The dicts come from the runtime's one declaration of the records; the stub's TypedDicts
    # are written by hand, so they are checked against them here.
    import ast
    import pathlib

    stub = pathlib.Path(idforge.__file__).with_name("_idforge.pyi")
    tree = ast.parse(stub.read_text())
    declared = {
        node.name: [item.target.id for item in node.body if isinstance(item, ast.AnnAssign)]
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name in ("_SegmentStats", "_EngineStats")
    }
    stats = idforge.Segments("memory:", "stub-keys").stats()
    assert list(stats) == declared["_SegmentStats"]
    assert list(stats["engine"]) == declared["_EngineStats"]
    assert all(isinstance(v, int) for k, v in stats.items() if k != "engine")
