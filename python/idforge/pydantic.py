"""Pydantic v2 types for idforge's ids (``pip install idforge[pydantic]``).

Each type validates every form a client may send and serializes to JSON in a form every JSON
reader keeps exactly:

============  ====================================================  ===============================
type          accepted                                              JSON
============  ====================================================  ===============================
SnowflakeId   an int, or its decimal text (0 to 2^64 - 1)           decimal text: ``"1541815603606036480"``
ShortId       an int, or its 13-character base32 text, either case  base32 text: ``"1V1ACTG7W0000"``
Uuid7         a ``uuid.UUID`` or its text, version 7 only           the UUID's text
Ulid          26 Crockford base32 characters, either case           the canonical (upper-case) text
ObjectIdStr   an :class:`idforge.ObjectId`, 24 hex digits, 12 bytes  24 lowercase hex digits
============  ====================================================  ===============================

A snowflake id is a string in JSON because JavaScript's numbers hold 53 bits: an id above 2^53
read by ``JSON.parse`` comes back changed. Node's helper reads the same string back as a
``bigint`` (``docs/frameworks.md``). In Python mode (``model_dump()``) it stays an ``int``.
"""

from __future__ import annotations

import uuid as _uuid
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, PlainValidator, WithJsonSchema

from . import ObjectId, id_from_text, id_to_text, parse_ulid

__all__ = ["ObjectIdStr", "ShortId", "SnowflakeId", "Ulid", "Uuid7"]

_U64_MAX = (1 << 64) - 1


def _snowflake(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("a snowflake id is an int or its decimal text, not a bool")
    if isinstance(value, str):
        # The decimal form's one text (core/testdata/json_ids.json), read by the runtime as every
        # binding reads it: no sign, space, "0x", "1_000", exponent or leading zero.
        # InvalidDecimalError is a ValueError.
        return id_from_text(value, "decimal")
    if not isinstance(value, int):
        raise ValueError(f"a snowflake id is an int or its decimal text, not {type(value).__name__}")
    if not 0 <= value <= _U64_MAX:
        raise ValueError("a snowflake id is between 0 and 2^64 - 1")
    return value


def _short(value: Any) -> int:
    if isinstance(value, str):
        return id_from_text(value, "base32")  # InvalidBase32Error: a ValueError
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"a short id is an int or its base32 text, not {type(value).__name__}")
    if not 0 <= value <= _U64_MAX:
        raise ValueError("a short id is between 0 and 2^64 - 1")
    return value


def _uuid7(value: Any) -> _uuid.UUID:
    u = value if isinstance(value, _uuid.UUID) else _uuid.UUID(str(value))
    if u.version != 7:
        raise ValueError(f"a version {u.version} UUID, not a UUIDv7")
    return u


def _object_id(value: Any) -> ObjectId:
    if isinstance(value, ObjectId):
        return value
    if isinstance(value, (str, bytes)):
        return ObjectId(value)  # InvalidHexError / InvalidLengthError: ValueErrors
    raise ValueError(f"an ObjectId is 24 hex digits or 12 bytes, not {type(value).__name__}")


SnowflakeId = Annotated[
    int,
    BeforeValidator(_snowflake),
    PlainSerializer(str, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "pattern": "^[0-9]{1,20}$", "description": "a snowflake id"},
                   mode="serialization"),
]
"""A snowflake id: ``int`` in Python, decimal text in JSON."""

ShortId = Annotated[
    int,
    BeforeValidator(_short),
    PlainSerializer(id_to_text, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "pattern": "^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{13}$",
                    "description": "a 64-bit id in Crockford base32"}, mode="serialization"),
]
"""A 64-bit id (a snowflake) in its short text form: ``int`` in Python, 13 Crockford base32
characters in JSON (TSID's form, sortable like the ids); validation takes an int or that text
in either case (``idforge.id_from_text``'s rules)."""

Uuid7 = Annotated[_uuid.UUID, BeforeValidator(_uuid7)]
"""A UUIDv7 (``uuid.UUID``); another version fails validation."""

Ulid = Annotated[str, BeforeValidator(lambda v: parse_ulid(v) if isinstance(v, str) else v)]
"""A ULID's canonical text."""

ObjectIdStr = Annotated[
    ObjectId,
    PlainValidator(_object_id),
    PlainSerializer(str, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "pattern": "^[0-9a-f]{24}$", "description": "a MongoDB ObjectId"}),
]
"""An :class:`idforge.ObjectId`; 24 hex digits in JSON."""
