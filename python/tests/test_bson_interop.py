"""Interop with the real pymongo package (bson.ObjectId) and with uuid.UUID."""
import uuid

import bson  # pymongo: a test dependency (`pip install ./python[test]`), installed by ci/test.sh

import idforge


def test_our_hex_parses_with_bson_and_times_agree():
    for _ in range(100):
        ours = idforge.ObjectId()
        theirs = bson.ObjectId(str(ours))
        assert theirs.binary == bytes(ours)
        assert theirs.generation_time == ours.generation_time
        assert ours.to_bson() == theirs


def test_bson_ids_parse_with_ours():
    for _ in range(100):
        theirs = bson.ObjectId()
        assert str(idforge.ObjectId(str(theirs))) == str(theirs)
        assert idforge.ObjectId(theirs) == idforge.ObjectId.from_bson(theirs)
        assert bytes(idforge.ObjectId(theirs)) == theirs.binary
        assert idforge.ObjectId(theirs).generation_time == theirs.generation_time


def test_flake128_uuid_round_trip():
    for _ in range(100):
        f = idforge.Flake128()
        u = uuid.UUID(str(f.uuid))
        assert idforge.Flake128.from_uuid(u) == f and u.int == int(f)
