"""Checked by mypy in CI (ci/test.sh python): the public API as a typed user sees it. Not run."""
import datetime
import uuid
from array import array
from typing import Optional, Tuple

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
