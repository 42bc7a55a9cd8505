"""SQLAlchemy 2 column types for idforge's ids (``pip install idforge[sqlalchemy]``).

Each type stores its id in the column type that keeps the database's order the id's creation
order, so ``ORDER BY id`` lists rows as they were made:

============  =====================================  ==============================================
type          PostgreSQL                             elsewhere (SQLite, MySQL, …)
============  =====================================  ==============================================
SnowflakeId   ``BIGINT``                             ``BIGINT`` (SQLite: ``INTEGER`` affinity)
Uuid7         ``UUID``                               ``CHAR(32)``, lowercase hex
Ulid          ``VARCHAR(26)``, Crockford base32      the same
ObjectIdType  ``BYTEA`` (12 bytes)                   ``BLOB`` / ``VARBINARY(12)``
============  =====================================  ==============================================

A primary key made at insert time (a generator per process; ``docs/frameworks.md``)::

    ids = idforge.Snowflake("twitter", node_id=1)

    class Order(Base):
        __tablename__ = "orders"
        id: Mapped[int] = mapped_column(SnowflakeId, primary_key=True, default=ids.next)
        ref: Mapped[uuid.UUID] = mapped_column(Uuid7, default=idforge.uuid7)

A value of the wrong kind (an id past BIGINT, a UUID of another version, a malformed ULID) is
refused at bind time with ``ValueError`` (SQLAlchemy raises it as ``StatementError``), never
stored.
"""

from __future__ import annotations

import uuid as _uuid
from typing import Any, Optional, Union

from sqlalchemy import types as _types

from . import ObjectId, parse_ulid

__all__ = ["ObjectIdType", "SnowflakeId", "Ulid", "Uuid7"]

_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


class SnowflakeId(_types.TypeDecorator[int]):
    """A snowflake id (any signed layout) as ``BIGINT``; Python ``int``.

    Ids of unsigned layouts past 2^63 - 1 do not fit ``BIGINT`` and are refused.
    """

    impl = _types.BigInteger
    cache_ok = True

    def process_bind_param(self, value: Optional[int], dialect: Any) -> Optional[int]:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"a snowflake id is an int, not {type(value).__name__}")
        if not _I64_MIN <= value <= _I64_MAX:
            raise ValueError(f"snowflake id {value} does not fit a signed 64-bit BIGINT")
        return value

    def process_result_value(self, value: Optional[int], dialect: Any) -> Optional[int]:
        return None if value is None else int(value)


class Uuid7(_types.TypeDecorator[_uuid.UUID]):
    """A UUIDv7: PostgreSQL's native ``UUID``, ``CHAR(32)`` hex elsewhere; ``uuid.UUID``.

    Binds a ``uuid.UUID`` or its text; a UUID of another version is refused.
    """

    impl = _types.Uuid
    cache_ok = True

    def process_bind_param(self, value: Union[_uuid.UUID, str, None], dialect: Any) -> Optional[_uuid.UUID]:
        if value is None:
            return None
        u = value if isinstance(value, _uuid.UUID) else _uuid.UUID(str(value))
        if u.version != 7:
            raise ValueError(f"{u} is a version {u.version} UUID, not a UUIDv7")
        return u


class Ulid(_types.TypeDecorator[str]):
    """A ULID as its 26-character Crockford base32 text, in the canonical form (upper case,
    no aliases), which sorts by time."""

    impl = _types.String(26)
    cache_ok = True

    def process_bind_param(self, value: Optional[str], dialect: Any) -> Optional[str]:
        # InvalidBase32Error (a ValueError) on a malformed one; `i`, `l`, `o` become 1, 1, 0.
        return None if value is None else parse_ulid(str(value))


class ObjectIdType(_types.TypeDecorator[ObjectId]):
    """A MongoDB ObjectId as its 12 bytes (``BYTEA``, ``BLOB``); :class:`idforge.ObjectId`."""

    impl = _types.LargeBinary(12)
    cache_ok = True

    def process_bind_param(self, value: Union[ObjectId, bytes, str, None], dialect: Any) -> Optional[bytes]:
        if value is None:
            return None
        return bytes(value if isinstance(value, ObjectId) else ObjectId(value))

    def process_result_value(self, value: Optional[bytes], dialect: Any) -> Optional[ObjectId]:
        return None if value is None else ObjectId(bytes(value))
