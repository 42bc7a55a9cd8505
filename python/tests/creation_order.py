"""The order one thread's ids must have, shared by the ORM tests (tests/test_django.py copies it
beside its project's check.py)."""

COUNTER = 1 << 24


def in_creation_order(column, ids):
    """True when ``ids``, made one after another by one thread, are in the order their kind
    promises. Snowflakes, UUIDv7s and ULIDs increase. An ObjectId's 3-byte counter starts at a
    random value and wraps (the bson format), so ObjectIds increase by second, and within a second
    the counter steps forward modulo 2^24: sorted() puts the ids after a wrap first."""
    if column != "oid":
        return ids == sorted(ids)
    for a, b in zip(ids, ids[1:]):
        a, b = bytes(a), bytes(b)
        if a[:4] > b[:4]:
            return False
        step = (int.from_bytes(b[9:], "big") - int.from_bytes(a[9:], "big")) % COUNTER
        if a[:4] == b[:4] and not 0 < step < COUNTER // 2:
            return False
    return True
