#!/usr/bin/env python3
"""Generates core/testdata/id_text.json, the shared vectors of the 64-bit id text forms.

Run from anywhere: `python3 core/testdata/gen_id_text.py` rewrites the file next to this script
(`--check` fails when the committed file differs). It is an independent model written with
Python's unbounded integers, never importing or running the Rust code.

The forms: decimal (digits, no leading zero), base32 (13 Crockford characters, upper case out,
either case in, no I L O U), base62 (11 characters of 0-9A-Za-z). Parsers take only the one text
of an id (up to base32's case).
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
U64_MAX = (1 << 64) - 1


def digits(value, alphabet, width):
    out = []
    for _ in range(width):
        value, digit = divmod(value, len(alphabet))
        out.append(alphabet[digit])
    assert value == 0
    return "".join(reversed(out))


def forms(value):
    return {
        "id": str(value),
        "decimal": str(value),
        "base32": digits(value, CROCKFORD, 13),
        "base62": digits(value, BASE62, 11),
    }


IDS = [
    0, 1, 9, 10, 31, 32, 61, 62, 1023, 1 << 32,
    (1 << 53) - 1, 1 << 53, (1 << 53) + 1,
    # Snowflakes of the twitter layout: 2026-11-29 on node 1, and a later one.
    ((1795996800000 - 1288834974657) << 22) | (1 << 12) | 7,
    7301234567890123456,
    (1 << 63) - 1, 1 << 63, U64_MAX - 1, U64_MAX,
]

# Accepted texts that are not the encoder's output: base32 in lower or mixed case.
PARSE = [
    {"form": "base32", "text": forms(v)["base32"].lower(), "id": str(v)}
    for v in (7301234567890123456, U64_MAX)
] + [{"form": "base32", "text": "6aMsJ4zMe9Ep0", "id": "7301234567890123456"}]

ERRORS = [
    ("decimal", "", "INVALID_DECIMAL"),
    ("decimal", "01", "INVALID_DECIMAL"),
    ("decimal", "00", "INVALID_DECIMAL"),
    ("decimal", "007", "INVALID_DECIMAL"),
    ("decimal", "00000000000000000007", "INVALID_DECIMAL"),
    ("decimal", "018446744073709551615", "INVALID_DECIMAL"),
    ("decimal", "+1", "INVALID_DECIMAL"),
    ("decimal", "-1", "INVALID_DECIMAL"),
    ("decimal", " 1", "INVALID_DECIMAL"),
    ("decimal", "1 ", "INVALID_DECIMAL"),
    ("decimal", "1e3", "INVALID_DECIMAL"),
    ("decimal", "18446744073709551616", "INVALID_DECIMAL"),
    ("decimal", "123456789012345678901", "INVALID_DECIMAL"),
    ("decimal", "\u0661", "INVALID_DECIMAL"),
    ("base32", "", "INVALID_BASE32"),
    ("base32", "1", "INVALID_BASE32"),
    ("base32", "000000000001", "INVALID_BASE32"),
    ("base32", "00000000000001", "INVALID_BASE32"),
    ("base32", "000000000000I", "INVALID_BASE32"),
    ("base32", "000000000000i", "INVALID_BASE32"),
    ("base32", "000000000000L", "INVALID_BASE32"),
    ("base32", "000000000000l", "INVALID_BASE32"),
    ("base32", "000000000000O", "INVALID_BASE32"),
    ("base32", "000000000000o", "INVALID_BASE32"),
    ("base32", "000000000000U", "INVALID_BASE32"),
    ("base32", "000000000000u", "INVALID_BASE32"),
    ("base32", "00000000000-1", "INVALID_BASE32"),
    ("base32", "G000000000000", "INVALID_BASE32"),
    ("base32", "ZZZZZZZZZZZZZ", "INVALID_BASE32"),
    ("base62", "", "INVALID_BASE62"),
    ("base62", "1", "INVALID_BASE62"),
    ("base62", "0000000001", "INVALID_BASE62"),
    ("base62", "000000000001", "INVALID_BASE62"),
    ("base62", "0000000000_", "INVALID_BASE62"),
    ("base62", "LygHa16AHYG", "INVALID_BASE62"),
    ("base62", "zzzzzzzzzzz", "INVALID_BASE62"),
]

# Texts that reading an id of any kind refuses (describe, the command line's decode, IDF.DECODE,
# SQL's describe): all digits is a snowflake, and its text is the decimal form's one text, so a
# leading zero is refused there too. "kind": "any" (detected) or the kind named.
DESCRIBE_ERRORS = [
    ("any", "007", "INVALID_DECIMAL"),
    ("any", "00", "INVALID_DECIMAL"),
    ("any", "00000000000000000007", "INVALID_DECIMAL"),
    ("snowflake", "007", "INVALID_DECIMAL"),
    ("snowflake", "01", "INVALID_DECIMAL"),
    ("snowflake", "+7", "INVALID_DECIMAL"),
]


def build():
    ids = [forms(v) for v in IDS]
    assert [r["base32"] for r in ids] == sorted(r["base32"] for r in ids)
    assert [r["base62"] for r in ids] == sorted(r["base62"] for r in ids)
    assert forms(U64_MAX)["base62"] == "LygHa16AHYF"
    return {
        "description": (
            "Text forms of 64-bit ids. decimal: digits, no sign, no leading zero. base32: exactly "
            "13 Crockford characters (0123456789ABCDEFGHJKMNPQRSTVWXYZ), upper case out, either "
            "case in, I L O U refused (no aliases). base62: exactly 11 characters of 0-9A-Za-z. "
            "\"ids\" rows: each form is the encoder's output and parses back to id. \"parse\" rows: "
            "accepted texts that are not the encoder's output. \"errors\" rows: refused, with the "
            "error code name. \"describe_errors\" rows: texts that reading an id of the kind "
            "(\"any\": detected) refuses, with the error code name. Ids are decimal strings "
            "because they exceed 2^53. Generated by gen_id_text.py."
        ),
        "ids": ids,
        "parse": PARSE,
        "errors": [{"form": f, "text": t, "error": e} for f, t, e in ERRORS],
        "describe_errors": [{"kind": k, "text": t, "error": e} for k, t, e in DESCRIBE_ERRORS],
    }


def main():
    text = json.dumps(build(), indent=2, ensure_ascii=False) + "\n"
    path = HERE / "id_text.json"
    if "--check" in sys.argv[1:]:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            sys.exit(f"{path} differs from gen_id_text.py's output: run it and commit")
        return
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
