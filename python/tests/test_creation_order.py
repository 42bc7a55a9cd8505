"""The ORM tests' rule for one thread's ids (creation_order.py), on ids made by hand: an ObjectId
counter's wrap inside a second is creation order, a step back is not."""

from creation_order import in_creation_order

import idforge


def oid(seconds, counter):
    return idforge.ObjectId(f"{seconds:08x}0102030405{counter:06x}")


def test_objectids_follow_seconds_then_the_counter_modulo_its_wrap():
    assert in_creation_order("oid", [oid(5, 0xFFFFFE), oid(5, 0xFFFFFF), oid(5, 0), oid(6, 0xFFFFF0)])
    assert not in_creation_order("oid", [oid(5, 3), oid(5, 2)])
    assert not in_creation_order("oid", [oid(5, 3), oid(5, 3)])
    assert not in_creation_order("oid", [oid(6, 3), oid(5, 4)])


def test_other_ids_must_increase():
    assert in_creation_order("id", [1, 2, 3])
    assert not in_creation_order("id", [2, 1, 3])
