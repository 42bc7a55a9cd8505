"""UUIDv7 and ULID: the shared vectors, order, threads, fork, the state file and typed errors."""
import datetime
import os
import threading
import time
import uuid

import pytest

import idforge

UUID7 = "uuid7.json"
ULID = "ulid.json"


def test_uuid7_fields_vectors(vectors):
    for r in vectors(UUID7)["fields"]:
        u = idforge.uuid7_from_fields(r["time_ms"], r["rand_a"], int(r["rand_b"]))
        assert type(u) is uuid.UUID
        assert str(u) == r["text"] and u.bytes.hex() == r["bytes"]
        assert u.version == 7 and u.variant == uuid.RFC_4122
        assert idforge.ulid_from_uuid(u) == r["ulid"]
        assert idforge.ulid_to_uuid(r["ulid"]) == u
        parts = idforge.uuid7_fields(r["text"])
        assert parts.time is None if r["time_ms"] > 253402300799999 else parts.time is not None
        assert (parts.time_ms, parts.rand_a, parts.rand_b) == (r["time_ms"], r["rand_a"], int(r["rand_b"]))
        for form in (r["text"], bytes.fromhex(r["bytes"]), u.int, u):
            assert idforge.parse_uuid7(form) == u


def test_uuid7_stamp_vectors(vectors):
    # The generator's layout, composed here from (time_ms, counter, random) as the file says:
    # counter >> 6 is rand_a, counter & 63 the top 6 bits of rand_b, then 56 random bits.
    for r in vectors(UUID7)["stamp"]:
        counter, random = r["counter"], int(r["random"])
        rand_b = (counter & 63) << 56 | random & ((1 << 56) - 1)
        assert str(idforge.uuid7_from_fields(r["time_ms"], counter >> 6, rand_b)) == r["text"]


def test_uuid7_parse_and_refuse_vectors(vectors):
    data = vectors(UUID7)
    for r in data["parse"]:
        assert str(idforge.parse_uuid7(r["input"])) == r["text"]
    for r in data["refuse"]:
        assert r["error"] == "INVALID_UUID"
        with pytest.raises(idforge.InvalidUuidError) as e:
            idforge.parse_uuid7(r["input"])
        assert e.value.name == "INVALID_UUID" and isinstance(e.value, ValueError)


def test_ulid_vectors(vectors):
    data = vectors(ULID)
    for r in data["fields"]:
        text = idforge.ulid_from_fields(r["time_ms"], int(r["random"]))
        assert text == r["text"]
        assert idforge.ulid_to_uuid(text).bytes.hex() == r["bytes"]
        assert idforge.ulid_fields(text)[1:] == (r["time_ms"], int(r["random"]))
    for r in data["stamp"]:
        random = r["counter"] << 62 | int(r["random"]) & ((1 << 62) - 1)
        assert idforge.ulid_from_fields(r["time_ms"], random) == r["text"]
    for r in data["parse"]:
        assert idforge.parse_ulid(r["input"]) == r["text"]
    for r in data["refuse"]:
        assert r["error"] == "INVALID_BASE32"
        with pytest.raises(idforge.InvalidBase32Error):
            idforge.parse_ulid(r["input"])


def test_bad_input_gets_typed_errors():
    with pytest.raises(idforge.InvalidLengthError):
        idforge.parse_uuid7(b"\x01" * 15)
    with pytest.raises(idforge.InvalidUuidError):
        idforge.parse_uuid7(1 << 128)
    with pytest.raises(idforge.InvalidUuidError):
        idforge.parse_uuid7(uuid.uuid4())
    with pytest.raises(TypeError):
        idforge.parse_uuid7(1.5)  # type: ignore[arg-type]
    with pytest.raises(idforge.TimeOutOfRangeError):
        idforge.uuid7_from_fields(1 << 48, 0, 0)
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.uuid7_from_fields(0, 1 << 12, 0)
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.uuid7_from_fields(0, 1 << 20, 0)
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.uuid7_from_fields(0, 0, 1 << 62)
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.ulid_from_fields(0, 1 << 80)
    with pytest.raises(idforge.InvalidBase32Error):
        idforge.ulid_to_uuid("0" * 25)
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.Uuid7s().next_many(1 << 28)
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.Uuid7s(policy="sometimes")


def test_uuid7_is_a_uuid_with_the_time_of_now():
    before = datetime.datetime.now(datetime.timezone.utc)
    u = idforge.uuid7()
    after = datetime.datetime.now(datetime.timezone.utc)
    assert type(u) is uuid.UUID and u.version == 7 and u.is_safe is uuid.SafeUUID.unknown
    assert uuid.UUID(str(u)) == u and hash(uuid.UUID(str(u))) == hash(u)
    # The coarse clock may trail by a kernel tick.
    slack = datetime.timedelta(milliseconds=20)
    assert before - slack <= idforge.uuid7_fields(u).time <= after
    with pytest.raises(TypeError):
        u.int = 5  # still immutable


def test_ids_strictly_increase_as_numbers_bytes_and_text():
    for make in (lambda: idforge.Uuid7s().next_many(50_000), lambda: [idforge.uuid7() for _ in range(50_000)]):
        ids = make()
        assert all(a < b for a, b in zip(ids, ids[1:]))
        assert sorted(ids, key=str) == ids and sorted(ids, key=lambda u: u.bytes) == ids
    g = idforge.Ulids()
    texts = [g.next() for _ in range(20_000)] + g.next_many(20_000)
    assert all(a < b for a, b in zip(texts, texts[1:])) and len(set(texts)) == len(texts)
    shared = [idforge.ulid() for _ in range(20_000)]
    assert all(a < b for a, b in zip(shared, shared[1:])) and all(len(t) == 26 for t in shared)


def test_threads_share_one_generator():
    g = idforge.Uuid7s()
    results = [[] for _ in range(8)]

    def work(out):
        for _ in range(20_000):
            out.append(g.next())
        out.extend(g.next_many(5_000))

    threads = [threading.Thread(target=work, args=(out,)) for out in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out in results:
        assert all(a < b for a, b in zip(out, out[1:]))
    every = [u for out in results for u in out]
    assert len(set(every)) == len(every) == 8 * 25_000


def test_a_forked_child_never_repeats_the_parents_ids():
    g = idforge.Uuid7s()
    g.next()
    idforge.uuid7()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            # next_many draws from the thread's stream, next() and uuid7() from the GIL's.
            ids = g.next_many(25_000) + [g.next() for _ in range(25_000)]
            ids += [idforge.uuid7() for _ in range(50_000)]
            os.write(w, b"".join(u.bytes for u in ids))
        finally:
            os._exit(0)
    os.close(w)
    mine = g.next_many(25_000) + [g.next() for _ in range(25_000)]
    mine += [idforge.uuid7() for _ in range(50_000)]
    data = b""
    while chunk := os.read(r, 1 << 20):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    theirs = [data[i : i + 16] for i in range(0, len(data), 16)]
    assert len(theirs) == 100_000
    every = {u.bytes for u in mine} | set(theirs)
    assert len(every) == 200_000


def test_a_state_file_keeps_ids_increasing_and_refuses_a_forked_child(tmp_path):
    path = tmp_path / "uuid7.state"
    g = idforge.Uuid7s(path)
    last = g.next_many(1000)[-1]
    assert g.persisted_ms is not None and g.persisted_ms >= idforge.uuid7_fields(last).time_ms
    del g
    again = idforge.Uuid7s(str(path), policy="wait", max_wait=2.0)
    assert again.policy == "wait" and again.next() > last
    pid = os.fork()
    if pid == 0:
        try:
            again.next()
            code = 1
        except idforge.ForkedError:
            code = 0
        except BaseException:  # noqa: BLE001 - any other outcome fails the test
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    u = idforge.Ulids(tmp_path / "ulid.state")
    assert u.next() < u.next() and u.persisted_ms is not None
    assert idforge.Uuid7s().persisted_ms is None


def test_random_start_spreads_snowflakes_over_shards():
    plain = idforge.Snowflake("twitter", node_id=1)
    spread = idforge.Snowflake("twitter", node_id=1, random_start=True)
    assert not plain.random_start and spread.random_start
    ids = {plain: [], spread: []}
    for _ in range(150):
        for g, out in ids.items():
            out.append(g.next())
        # Past the coarse clock's next tick (up to 4 ms), so most ids start a tick.
        time.sleep(0.005)
    for out in ids.values():
        assert all(a < b for a, b in zip(out, out[1:]))
    plain_seqs = [plain.decode(i).seq for i in ids[plain]]
    spread_seqs = [spread.decode(i).seq for i in ids[spread]]
    assert plain_seqs.count(0) > 75, "by default a tick starts at 0"
    assert spread_seqs.count(0) < 15 and len({s % 16 for s in spread_seqs}) >= 12
    assert max(spread_seqs) < 4096
