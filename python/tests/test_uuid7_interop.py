"""Interop of UUIDv7 and ULID with the peers' own types and parsers: the standard library's
uuid.UUID, uuid_utils and python-ulid (test dependencies, installed by ci/test.sh)."""
import copy
import gc
import os
import pickle
import sys
import uuid
import weakref

import ulid  # python-ulid
import uuid_utils

import idforge
from idforge import _idforge

# The speed tricks (hand-made methods, objects built from CPython's layouts) are on for CPython
# unless IDFORGE_PYTHON_SHORTCUTS=0 was set when the module loaded (ci/test.sh runs the suite
# both ways).
SHORTCUTS = sys.implementation.name == "cpython" and os.environ.get("IDFORGE_PYTHON_SHORTCUTS") != "0"


def test_the_shortcuts_switch_is_obeyed():
    assert _idforge._shortcuts is SHORTCUTS


def test_our_uuid7s_are_plain_uuid_objects():
    for u in [idforge.uuid7(), *idforge.Uuid7s().next_many(100)]:
        assert type(u) is uuid.UUID
        assert uuid.UUID(str(u)) == u and uuid.UUID(bytes=u.bytes) == u and uuid.UUID(int=u.int) == u
        assert u.version == 7 and u.variant == uuid.RFC_4122 and u.urn == f"urn:uuid:{u}"
        assert pickle.loads(pickle.dumps(u)) == u
        assert {u: 1}[uuid.UUID(u.hex)] == 1


def test_natively_made_uuids_behave_as_any_uuid_object():
    # uuid7() fills the object's slots itself: its weakref slot, copies and the collector
    # must see an ordinary uuid.UUID.
    u = idforge.uuid7()
    ref = weakref.ref(u)
    assert ref() is u
    assert copy.copy(u) == u and copy.deepcopy(u) == u and copy.deepcopy(u) is not u
    assert u.is_safe is uuid.SafeUUID.unknown and not gc.is_tracked(u)
    assert uuid.UUID(int=u.int) == u and u.int.bit_length() <= 128 and type(u.int) is int
    assert u.fields == uuid.UUID(str(u)).fields and u.bytes_le == uuid.UUID(str(u)).bytes_le
    del u
    gc.collect()
    assert ref() is None
    ids = [idforge.uuid7() for _ in range(1000)]
    assert len({hash(x) for x in ids}) > 990 and sorted(ids) == ids


def test_natively_made_ints_are_the_ints_python_makes():
    # The `int` slot's object is written digit by digit where the interpreter allows it: every
    # length (3 to 5 digits of 30 bits here) must be exact and normalised, as Python's own.
    import random
    import sys

    rng = random.Random(7)
    times = [0, 1, 2**30 - 1, 2**30, 2**40 - 1, 2**40, 2**47, 2**48 - 1]
    times += [rng.randrange(2**48) for _ in range(200)]
    for time_ms in times:
        u = idforge.uuid7_from_fields(time_ms, rng.randrange(2**12), rng.randrange(2**62))
        theirs = int.from_bytes(u.bytes, "big")
        assert u.int == theirs and int(str(u.int)) == theirs and hash(u.int) == hash(theirs)
        assert sys.getsizeof(u.int) == sys.getsizeof(theirs)
        assert u == uuid.UUID(int=theirs) and hash(u) == hash(uuid.UUID(int=theirs))
        assert (u.int >> 76) & 0xF == 7 and u.int - theirs == 0 and -u.int == -theirs


def test_uuid_utils_reads_ours_with_the_same_time():
    for u in idforge.Uuid7s().next_many(1000):
        theirs = uuid_utils.UUID(str(u))
        assert theirs.version == 7 and theirs.bytes == u.bytes
        assert theirs.timestamp == idforge.uuid7_fields(u).time_ms


def test_we_read_uuid_utils_and_stdlib_objects():
    for _ in range(1000):
        theirs = uuid_utils.uuid7()
        ours = idforge.parse_uuid7(theirs)
        assert ours.bytes == theirs.bytes and str(ours) == str(theirs)
        assert idforge.uuid7_fields(str(theirs)).time_ms == theirs.timestamp
        assert idforge.parse_uuid7(uuid.UUID(str(theirs))) == ours


def test_order_of_ours_is_the_order_of_their_objects():
    ids = [idforge.uuid7() for _ in range(10_000)]
    theirs = [uuid_utils.UUID(bytes=u.bytes) for u in ids]
    assert sorted(theirs) == theirs


def test_python_ulid_reads_ours_and_we_read_theirs():
    g = idforge.Ulids()
    texts = g.next_many(1000)
    parsed = [ulid.ULID.from_str(t) for t in texts]
    for text, theirs in zip(texts, parsed):
        assert str(theirs) == text
        assert theirs.milliseconds == idforge.ulid_fields(text).time_ms
        assert theirs.to_uuid() == idforge.ulid_to_uuid(text)
    assert sorted(parsed) == parsed
    for _ in range(1000):
        theirs = ulid.ULID()
        assert idforge.parse_ulid(str(theirs)) == str(theirs)
        assert idforge.parse_ulid(str(theirs).lower()) == str(theirs)
        assert idforge.ulid_fields(str(theirs)).time_ms == theirs.milliseconds
        assert idforge.ulid_from_uuid(theirs.to_uuid()) == str(theirs)


def test_a_uuid7_and_its_ulid_text_are_the_same_id():
    u = idforge.uuid7()
    text = idforge.ulid_from_uuid(u)
    assert ulid.ULID.from_str(text).to_uuid() == u
    assert ulid.ULID.from_uuid(u).milliseconds == idforge.uuid7_fields(u).time_ms
    assert idforge.ulid_to_uuid(text) == u
