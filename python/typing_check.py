"""Checked by mypy in CI (ci/test.sh python): the public API as a typed user sees it. Not run."""
import datetime
import uuid
from array import array
from typing import Dict, List, Optional, Tuple, Union

import idforge

ids: idforge.Snowflake = idforge.Snowflake("twitter", node_id=7, policy="wait", max_wait=0.5)
one: int = ids.next()
many: "array[int]" = ids.next_many(10)
parts: idforge.SnowflakeParts = ids.decode(one)
when: datetime.datetime = parts.time
bounds: Tuple[int, int] = ids.bounds_at(when)
layout: idforge.Layout = idforge.Layout.preset("discord")
composed: int = layout.compose(1, 2, 3)

oid: idforge.ObjectId = idforge.ObjectId()
text: str = str(oid)
raw: bytes = bytes(oid)
created: datetime.datetime = oid.generation_time
ordered: bool = oid < idforge.ObjectId(text)

flake: idforge.Flake128 = idforge.Flake128()
as_uuid: uuid.UUID = flake.uuid
as_int: int = int(flake)
generated: idforge.Flake128 = idforge.Flake128Generator().next()

u7: uuid.UUID = idforge.uuid7()
u7s: idforge.Uuid7s = idforge.Uuid7s("uuid7.state", policy="wait", max_wait=0.5)
u7_many: List[uuid.UUID] = u7s.next_many(10)
u7_next: uuid.UUID = u7s.next()
u7_parts: idforge.Uuid7Parts = idforge.uuid7_fields(u7)
u7_time: Optional[datetime.datetime] = u7_parts.time
u7_parsed: uuid.UUID = idforge.parse_uuid7("018bcfe5-687b-7abc-8123-456789abcdef")
u7_made: uuid.UUID = idforge.uuid7_from_fields(1, 2, 3)
persisted: Optional[int] = u7s.persisted_ms
ul: str = idforge.ulid()
ul_many: List[str] = idforge.Ulids().next_many(3)
ul_parts: idforge.UlidParts = idforge.ulid_fields(ul)
ul_random: int = ul_parts.random
ul_uuid: uuid.UUID = idforge.ulid_to_uuid(idforge.parse_ulid(ul))
ul_back: str = idforge.ulid_from_uuid(ul_uuid)
ul_made: str = idforge.ulid_from_fields(1, 2)
short: str = idforge.id_to_text(2**62, "base62") + idforge.id_to_text(1)
form: idforge.TextForm = "decimal"
short_back: int = idforge.id_from_text(short[:11], "base62") + idforge.id_from_text("1", form)
spread: idforge.Snowflake = idforge.Snowflake("twitter", node_id=1, random_start=True)
spreads: bool = spread.random_start

seg: idforge.Segments = idforge.Segments("memory:", "orders", step=100)
seg_ids: "array[int]" = seg.next_many(5)
maybe_id: Optional[int] = seg.try_next()


async def drawn_in_a_loop() -> int:
    await seg.ready_async()
    return await seg.next_async()

try:
    idforge.ObjectId("nope")
except idforge.InvalidHexError as e:
    code: int = e.code
    value_error: ValueError = e

# Any id's fields, by kind or detected.
described: Dict[str, Union[str, int]] = idforge.describe_id(str(short_back), "snowflake", layout="discord")
kind: idforge.IdType = "ulid"
described_text: str = str(idforge.describe_id(idforge.ulid(), kind)["time"])
