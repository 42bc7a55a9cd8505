#!/usr/bin/env python3
"""Generates core/testdata/uuid7.json and ulid.json, the shared UUIDv7 and ULID vectors.

Run from anywhere: `python3 core/testdata/gen_uuid7_ulid.py` rewrites both files next to this
script (`--check` fails when a committed file differs). It is an independent model written with
Python's `uuid` module and unbounded integers (RFC 9562's field layout, the ULID spec's Crockford
base32), never importing or running the Rust code.

A generator's id is stamped from (time_ms, an 18-bit counter, random bits): UUIDv7 puts the
counter's top 12 bits in rand_a and its low 6 bits at the top of rand_b, then 56 random bits;
ULID puts the counter in the top 18 of its 80 random bits, then 62 random bits.
"""

import json
import sys
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def crockford(value):
    return "".join(CROCKFORD[(value >> (5 * i)) & 31] for i in reversed(range(26)))


def uuid7(time_ms, rand_a, rand_b):
    return time_ms << 80 | 7 << 76 | rand_a << 64 | 2 << 62 | rand_b


def stamp_uuid7(time_ms, counter, random):
    return uuid7(time_ms, counter >> 6, (counter & 0x3F) << 56 | random & ((1 << 56) - 1))


def stamp_ulid(time_ms, counter, random):
    return time_ms << 80 | counter << 62 | random & ((1 << 62) - 1)


def uuid7_row(time_ms, rand_a, rand_b):
    value = uuid7(time_ms, rand_a, rand_b)
    u = uuid.UUID(int=value)
    assert u.version == 7 and u.variant == uuid.RFC_4122
    return {
        "time_ms": time_ms,
        "rand_a": rand_a,
        "rand_b": str(rand_b),
        "text": str(u),
        "bytes": u.bytes.hex(),
        "ulid": crockford(value),
    }


def uuid7_vectors():
    fields = [
        uuid7_row(0, 0, 0),
        uuid7_row(1, 1, 1),
        uuid7_row(1_700_000_000_123, 0xABC, 0x0123_4567_89AB_CDEF),
        uuid7_row(1_767_225_600_000, 0x800, 1 << 61),
        uuid7_row((1 << 48) - 1, 0xFFF, (1 << 62) - 1),
    ]
    stamps = []
    for time_ms, counter, random in [
        (1_700_000_000_000, 0, 0),
        (1_700_000_000_000, 1, 0xFFFF_FFFF_FFFF_FFFF),
        (1_700_000_000_000, (1 << 18) - 1, 0x0011_2233_4455_6677),
        (1_767_225_600_000, 0x2_A5A5, 0xDEAD_BEEF_CAFE_F00D),
    ]:
        u = uuid.UUID(int=stamp_uuid7(time_ms, counter, random))
        stamps.append(
            {"time_ms": time_ms, "counter": counter, "random": str(random), "text": str(u)}
        )
    base = fields[2]["text"]
    accepted = [
        base.upper(),
        base.replace("-", ""),
        "{" + base + "}",
        "urn:uuid:" + base,
        "URN:UUID:" + base.upper(),
    ]
    v4 = str(uuid.UUID(int=uuid7(1, 1, 1) ^ (7 << 76) | (4 << 76)))
    wrong_variant = str(uuid.UUID(int=uuid7(1, 1, 1) ^ (2 << 62) | (3 << 62)))
    refuse = [
        {"input": "", "error": "INVALID_UUID"},
        {"input": base[:-1], "error": "INVALID_UUID"},
        {"input": base + "0", "error": "INVALID_UUID"},
        {"input": base.replace("-", "_"), "error": "INVALID_UUID"},
        {"input": base[:9] + "-" + base[10:], "error": "INVALID_UUID"},
        {"input": base[:-1] + "g", "error": "INVALID_UUID"},
        {"input": "{" + base, "error": "INVALID_UUID"},
        {"input": v4, "error": "INVALID_UUID"},
        {"input": wrong_variant, "error": "INVALID_UUID"},
        {"input": "00000000-0000-0000-0000-000000000000", "error": "INVALID_UUID"},
    ]
    return {
        "description": (
            "UUIDv7 (RFC 9562). fields: time_ms, rand_a (12 bits), rand_b (62 bits, decimal "
            "string) -> hyphenated lower-case text, the 16 bytes in hex, and the same 128 bits "
            "as ULID text. stamp: what a generator makes of (time_ms, counter (18 bits), random "
            "(64 bits, decimal string, the low 56 used)): counter >> 6 is rand_a, counter & 63 "
            "the top 6 bits of rand_b. parse: other accepted spellings of fields[2]. refuse: "
            "inputs a UUIDv7 parser rejects, with the error code."
        ),
        "fields": fields,
        "stamp": stamps,
        "parse": [{"input": a, "text": base} for a in accepted],
        "refuse": refuse,
    }


def ulid_row(time_ms, random):
    value = time_ms << 80 | random
    return {
        "time_ms": time_ms,
        "random": str(random),
        "text": crockford(value),
        "bytes": value.to_bytes(16, "big").hex(),
    }


def ulid_vectors():
    fields = [
        ulid_row(0, 0),
        ulid_row(1, 1),
        # The ULID spec's README example time.
        ulid_row(1_469_918_176_385, 0x1234_5678_9ABC_DEF0_1234),
        ulid_row((1 << 48) - 1, (1 << 80) - 1),
    ]
    stamps = []
    for time_ms, counter, random in [
        (1_469_918_176_385, 0, 0),
        (1_469_918_176_385, 1, 0xFFFF_FFFF_FFFF_FFFF),
        (1_700_000_000_000, (1 << 18) - 1, 0x0123_4567_89AB_CDEF),
    ]:
        stamps.append(
            {
                "time_ms": time_ms,
                "counter": counter,
                "random": str(random),
                "text": crockford(stamp_ulid(time_ms, counter, random)),
            }
        )
    base = fields[2]["text"]
    aliases = base.replace("1", "I", 1) if "1" in base else base
    parse = [
        {"input": base.lower(), "text": base},
        {"input": aliases, "text": base},
        {"input": "0O0000000000000000000000LI", "text": "00000000000000000000000011"},
    ]
    refuse = [
        {"input": "", "error": "INVALID_BASE32"},
        {"input": base[:-1], "error": "INVALID_BASE32"},
        {"input": base + "0", "error": "INVALID_BASE32"},
        {"input": "8" + base[1:], "error": "INVALID_BASE32"},
        {"input": base[:-1] + "U", "error": "INVALID_BASE32"},
        {"input": base[:-1] + "-", "error": "INVALID_BASE32"},
    ]
    return {
        "description": (
            "ULID (48-bit Unix ms, 80 random bits, 26 characters of Crockford base32, upper "
            "case). fields: time_ms, random (decimal string) -> text and the 16 big-endian "
            "bytes in hex. stamp: what a generator makes of (time_ms, counter (18 bits), random "
            "(64 bits, decimal string, the low 62 used)): the counter is the top 18 of the 80 "
            "bits. parse: accepted spellings (lower case, Crockford's aliases I/L = 1, O = 0). "
            "refuse: inputs a ULID parser rejects, with the error code."
        ),
        "fields": fields,
        "stamp": stamps,
        "parse": parse,
        "refuse": refuse,
    }


def main():
    check = "--check" in sys.argv[1:]
    failed = False
    for name, data in (("uuid7.json", uuid7_vectors()), ("ulid.json", ulid_vectors())):
        text = json.dumps(data, indent=2) + "\n"
        path = HERE / name
        if check:
            if not path.exists() or path.read_text() != text:
                print(f"{path} differs from {Path(__file__).name}'s output", file=sys.stderr)
                failed = True
        else:
            path.write_text(text)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
