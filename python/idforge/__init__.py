"""idforge: unique ids that never repeat (snowflake, MongoDB ObjectId, flake-128, segments,
UUIDv7 and ULID).

The generators are native (Rust) and thread-safe; the GIL is released whenever a call may wait.
After ``os.fork()`` a child never repeats its parent's ids: ObjectIds and random-worker flake ids
reseed, segments fetch their own ranges, UUIDv7s and ULIDs draw new random bits, and a fixed-node
``Snowflake`` (or a generator with a state file) raises ``ForkedError``.
"""

from __future__ import annotations

import asyncio as _asyncio
import datetime as _dt
import uuid as _uuid
from array import array as _array
from typing import Any, Dict, List, Literal, NamedTuple, Optional, Tuple, Union

from . import _idforge as _native
from ._errors import *  # noqa: F401,F403 - the exception classes are part of the API
from ._errors import InvalidUuidError
from ._errors import __all__ as _error_names
from ._idforge import Layout, ulid, uuid7

__version__: str = _native.__version__

__all__ = [
    "Flake128",
    "Flake128Generator",
    "Layout",
    "ObjectId",
    "Segments",
    "Snowflake",
    "SnowflakeParts",
    "TextForm",
    "IdType",
    "UlidParts",
    "Ulids",
    "Uuid7Parts",
    "Uuid7s",
    "describe_id",
    "id_from_text",
    "id_to_text",
    "parse_ulid",
    "parse_uuid7",
    "ulid",
    "ulid_fields",
    "ulid_from_fields",
    "ulid_from_uuid",
    "ulid_to_uuid",
    "uuid7",
    "uuid7_fields",
    "uuid7_from_fields",
    *_error_names,
]

_UTC = _dt.timezone.utc


def _from_ms(ms: int) -> _dt.datetime:
    return _dt.datetime(1970, 1, 1, tzinfo=_UTC) + _dt.timedelta(milliseconds=ms)


def _to_ms(time: Union[int, _dt.datetime]) -> int:
    if isinstance(time, _dt.datetime):
        if time.tzinfo is None:
            raise ValueError("a naive datetime is ambiguous; give it a tzinfo")
        delta = time - _dt.datetime(1970, 1, 1, tzinfo=_UTC)
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    return int(time)


class SnowflakeParts(NamedTuple):
    """The fields of a snowflake id."""

    time: _dt.datetime
    """The start of the id's tick, an aware UTC datetime."""
    time_ms: int
    """The same, in Unix milliseconds."""
    node: int
    seq: int
    tick: int
    """Ticks since the layout's epoch."""


class Snowflake(_native.Snowflake):
    """64-bit snowflake ids in a layout (a preset name such as ``"twitter"``, a spec such as
    ``"epoch=1288834974657,tick=1,time=41,node=10,seq=12"``, or a ``Layout``).

    ``policy``: ``"borrow"`` (default: run up to ``max_wait`` seconds, default 1, ahead of the
    clock under bursts), ``"wait"`` (wait for the next tick, at most ``max_wait``) or ``"error"``.
    ``state_file`` keeps a high-water mark so a restart with the clock set back never repeats ids.
    ``lease="idforge://host:port", service="orders"`` leases the node id from the segment server
    instead of ``node_id`` (the lowest id no live process of the service holds; renewed in the
    background every third of ``lease_ttl`` seconds, default 10; given back when the generator is
    garbage-collected). If the lease is lost, every call raises ``LeaseLostError``. Ids carry
    times after the id's time floor (the latest time its earlier holder could have used): a clock
    behind it waits within ``max_wait`` or raises ``ClockBehindError``. A host whose clock is more
    than 1 s from the server's is refused with ``ClockBehindError``; ``?max_skew_ms=N`` on the
    ``lease`` URL sets that bound. ``?holder=NAME`` (a stable name of this instance, such as its
    host and port or its pod's name) makes the id sticky: a restarted instance gets its own node
    id back, and the server keeps it reserved for it meanwhile (docs/server.md, "Sticky ids").
    ``&lease_file=PATH`` with it keeps the lease in a file, so a restart while the server is out of
    reach still starts (docs/server.md, "Lease files").

    ``random_start=True`` starts each tick's sequence at a random value below half its range
    instead of 0, so ``id % n`` spreads evenly over ``n`` shards even at a few ids per tick (by
    default most ids end in sequence 0). A tick then holds at least half its sequence range
    (2,048 ids per ms in the Twitter layout) before borrowing the next; ids still increase.
    """

    def next_many(self, n: int) -> "_array[int]":
        """``n`` fresh ids, increasing, as a compact ``array('Q')``."""
        out = _array("Q")
        out.frombytes(self.next_many_bytes(n))
        return out

    def decode(self, id: int) -> SnowflakeParts:
        """The fields of ``id``."""
        tick, time_ms, node, seq = self.decompose(id)
        return SnowflakeParts(_from_ms(time_ms), time_ms, node, seq, tick)

    def compose(self, time: Union[int, _dt.datetime], node: Optional[int] = None, seq: int = 0) -> int:
        """The id for ``time`` (Unix ms or an aware datetime), ``node`` (default: this one), ``seq``."""
        layout = self.layout
        tick = (_to_ms(time) - layout.epoch_ms) // layout.tick_ms
        if tick < 0:
            raise _native_error(4, "the time is before the layout's epoch")
        return layout.compose(tick, self.node_id if node is None else node, seq)

    def bounds_at(self, time: Union[int, _dt.datetime]) -> Tuple[int, int]:
        """``(min, max)``: the smallest and largest ids of the tick holding ``time``."""
        return self.layout.bounds_at(_to_ms(time))


def _native_error(code: int, message: str) -> Exception:
    from ._errors import by_code

    return by_code(code, message)


class ObjectId(_native.ObjectId):
    """A MongoDB ObjectId. ``ObjectId()`` makes a fresh one; ``ObjectId(x)`` parses 24 hex digits,
    12 bytes, an ObjectId or a ``bson.ObjectId``."""

    @property
    def generation_time(self) -> _dt.datetime:
        """The creation time (whole seconds), an aware UTC datetime, as pymongo's."""
        return _dt.datetime.fromtimestamp(self.timestamp, tz=_UTC)

    def to_bson(self) -> Any:
        """This id as pymongo's ``bson.ObjectId`` (needs pymongo)."""
        from bson import ObjectId as BsonObjectId

        return BsonObjectId(self.binary)

    @classmethod
    def from_bson(cls, value: Any) -> "ObjectId":
        """From pymongo's ``bson.ObjectId``."""
        return cls(value.binary)


class Flake128(_native.Flake128):
    """A 128-bit flake id (64-bit ms | 48-bit worker | 16-bit sequence). ``Flake128()`` makes a
    fresh one; ``Flake128(x)`` takes an int, 16 bytes, base62 or hex text; ``int()``, ``bytes()``,
    ``.base62``, ``.hex`` and ``.uuid`` convert."""

    @property
    def uuid(self) -> _uuid.UUID:
        """The id's 16 bytes as a ``uuid.UUID``."""
        return _uuid.UUID(bytes=bytes(self))

    @classmethod
    def from_uuid(cls, value: _uuid.UUID) -> "Flake128":
        """From a ``uuid.UUID`` made by ``.uuid``."""
        return cls(value.bytes)

    @property
    def datetime(self) -> _dt.datetime:
        """The id's millisecond, an aware UTC datetime."""
        return _from_ms(self.time_ms)

    @classmethod
    def from_parts(cls, time_ms: int, worker: int, seq: int) -> "Flake128":
        """From its fields; a worker over 48 bits raises ``NodeOutOfRangeError``."""
        return cls(_native.Flake128.from_parts(time_ms, worker, seq))

    @classmethod
    def from_base62(cls, text: str) -> "Flake128":
        """Parses base62 (22 characters, or Boundary's unpadded form)."""
        return cls(_native.Flake128.from_base62(text))

    @classmethod
    def from_hex(cls, text: str) -> "Flake128":
        """Parses 32 hex digits."""
        return cls(_native.Flake128.from_hex(text))


class Flake128Generator(_native.Flake128Generator):
    """Flake-128 ids with a worker id of their own: ``None`` (48 random bits, drawn again after a
    fork), ``"mac"``, or an int (a forked child then raises ``ForkedError``)."""

    def next(self) -> Flake128:
        """The next id."""
        return Flake128(super().next())


class Segments(_native.Segments):
    """Ids of one tag from a segment source, prefetched in the background (Leaf's double buffer
    and dynamic step). The source is chosen by URL:

    - ``"idforge://[user:pass@]host:port[,host:port...]"``: the idforge segment server (durable;
      follows ``MOVED`` to the primary); ``"idforge://a:7379,b:7379?mode=any"``: striped
      servers (``--stripe K/N``), any live one, a dead one skipped at once (ids unique but
      interleaved across the servers);
    - ``"redis://[user:pass@]host:port[/db]"``: Redis ``INCRBY`` (fast, but a Redis restart
      without ``appendfsync always`` or a failover can hand out a range again);
    - ``"postgres://..."``, ``"mysql://..."``, ``"sqlite:///path"``: Meituan Leaf's ``leaf_alloc``
      table (``?table=...``, ``?auto_create=false`` to use an existing table as it is);
    - ``"file:///dir"`` (one host) and ``"memory:"`` (this process).

    The options are keyword-only: ``step``, ``max_step``, ``dynamic_step``, ``target``
    (seconds), ``prefetch_pct``, ``timeout`` (seconds); one left out (or ``None``) takes its
    default. Their defaults and bounds are the same in every language (the table in the README's
    "Segment sources"); one out of bounds raises ``InvalidArgumentError`` naming it.
    ``options()`` gives the options in effect.

    ``timeout`` is the longest a call waits for a range when none is buffered: it
    waits through transient failures (a server restarting or failing over, a refused
    connection, a busy database; retried with backoff) and raises before it only for permanent
    ones (authentication refused, an unknown tag with ``auto_create=false``, an overflow, a
    malformed reply, a source that went back). It is also one request's budget unless the URL
    sets ``?timeout_ms=``. ``next()`` releases the GIL when it must wait; in asyncio code use
    ``await next_async()``, which waits in a worker thread.

    Every ``Segments`` of the process on the same URL shares one background refill engine: one
    thread and one connection for ``idforge://`` and ``redis://`` however many tags (ranges due
    together go out in one round trip), a pool of ``?pool=`` connections (default 4) for
    PostgreSQL and MySQL. ``stats()["engine"]`` holds its figures.

    ``sqlite://``: do not open the same database file with Python's ``sqlite3`` in this
    process. That is another SQLite library, blind to idforge's locks, and the two would hand out
    the same ids; idforge refuses ranges (``SourceUnavailableError``) while such a connection is
    open. Other processes are safe.
    """

    async def next_async(self) -> int:
        """The next id, without blocking the event loop: a buffered id at once, else the wait
        runs in the loop's default executor."""
        found = self.try_next()
        if found is not None:
            return found
        return await _asyncio.get_running_loop().run_in_executor(None, self.next)

    async def ready_async(self) -> None:
        """Waits, off the event loop, until an id is buffered (raises the source's error)."""
        await _asyncio.get_running_loop().run_in_executor(None, self.ready)

    def next_many(self, n: int) -> "_array[int]":
        """``n`` ids as a compact ``array('Q')``."""
        out = _array("Q")
        out.frombytes(self.next_many_bytes(n))
        return out


# ---- UUIDv7 and ULID ------------------------------------------------------------------------


def _time_or_none(ms: int) -> Optional[_dt.datetime]:
    try:
        return _from_ms(ms)
    except OverflowError:
        return None


class Uuid7Parts(NamedTuple):
    """The fields of a UUIDv7 (RFC 9562)."""

    time: Optional[_dt.datetime]
    """The id's millisecond, an aware UTC datetime (``None`` past 9999, where datetime ends)."""
    time_ms: int
    """The same, in Unix milliseconds (48 bits)."""
    rand_a: int
    """The 12 bits after the version (the top of idforge's counter)."""
    rand_b: int
    """The 62 bits after the variant."""


class UlidParts(NamedTuple):
    """The fields of a ULID."""

    time: Optional[_dt.datetime]
    """The id's millisecond, an aware UTC datetime (``None`` past 9999, where datetime ends)."""
    time_ms: int
    """The same, in Unix milliseconds (48 bits)."""
    random: int
    """The 80 bits after the time."""


class Uuid7s(_native.Uuid7s):
    """UUIDv7s (RFC 9562) as ``uuid.UUID``: 48-bit Unix ms, an 18-bit counter that starts each
    millisecond at a random value below 2^17 (so at least 131,072 ids a ms), 56 random bits.

    Strictly increasing, from any number of threads: a clock stepped back keeps counting in the
    last millisecond (within ``policy``: ``"borrow"`` runs up to ``max_wait`` seconds, default
    1, ahead of the clock; ``"wait"`` waits at most ``max_wait``; ``"error"`` raises).
    ``state_file`` keeps a high-water time, so ids also increase across restarts with the clock
    set back. After ``os.fork()`` the child draws its own random bits and never repeats the
    parent's ids; a generator with a state file raises ``ForkedError`` in the child (make a new
    one there). ``uuid7()`` uses one process-wide generator.
    """

    def next_many(self, n: int) -> List[_uuid.UUID]:
        """``n`` fresh UUIDs, increasing."""
        return super().next_many(n)


class Ulids(_native.Ulids):
    """ULIDs (26 characters of Crockford base32, upper case), strictly increasing: the ULID
    spec's monotonic mode. Same engine and options as ``Uuid7s`` (18-bit counter, 62 random
    bits). ``ulid()`` uses one process-wide generator."""

    def next_many(self, n: int) -> List[str]:
        """``n`` fresh ULIDs, increasing."""
        return super().next_many(n)


_UUID_INPUT = Union[str, bytes, int, _uuid.UUID]


_ID_TEXT_CUT = 64
"""What ``id_from_text`` reads of a text at most (every form is 20 characters or fewer)."""

TextForm = Literal["decimal", "base32", "base62"]
"""A text form of a 64-bit id: ``decimal`` (digits: JSON-safe, not sortable as text),
``base32`` (13 Crockford characters, TSID's form: sortable, case-insensitive) or ``base62``
(11 characters of ``0-9A-Za-z``: sortable byte-wise)."""


def id_to_text(id: int, form: TextForm = "base32") -> str:
    """A 64-bit id (a snowflake, 0 to 2^64 - 1) written in ``form``::

        >>> idforge.id_to_text(7301234567890123456)
        '6AMSJ4ZME9EP0'
        >>> idforge.id_to_text(7301234567890123456, "base62")
        '8hLjMy0Qexc'

    An id out of range raises ``InvalidArgumentError``, an unknown form too; a non-int
    ``TypeError``."""
    if isinstance(id, bool) or not isinstance(id, int):
        raise TypeError(f"an id is an int, not {type(id).__name__}")
    if not 0 <= id <= 0xFFFF_FFFF_FFFF_FFFF:
        raise InvalidArgumentError(f"an id is between 0 and 2^64 - 1, not {id}")
    return _native.id_to_text(id, form)


def id_from_text(text: str, form: TextForm = "base32") -> int:
    """The id whose text in ``form`` is ``text``. Only the id's one text is taken (base32 in
    either case): a sign, a space, a leading zero, another width, or Crockford's look-alikes
    ``I L O U`` raise the form's error (``InvalidDecimalError``, ``InvalidBase32Error``,
    ``InvalidBase62Error``), so two different texts never name one id."""
    if not isinstance(text, str):
        raise TypeError(f"id text is a str, not {type(text).__name__}")
    # No form is longer than 20 characters: a longer text is refused by its length all the same,
    # and the cut bounds the work (and any UTF-8 copy) whatever the caller passes.
    return _native.id_from_text(text[:_ID_TEXT_CUT], form)


IdType = Literal["snowflake", "objectid", "flake128", "uuid7", "ulid"]
"""The kinds of id ``describe_id`` reads."""

_DESCRIBE_CUT = 64
"""What ``describe_id`` reads of a text at most (the longest id text, a UUID after
``urn:uuid:``, is 45 characters)."""


def describe_id(
    text: str,
    kind: Optional[IdType] = None,
    *,
    form: Optional[TextForm] = None,
    layout: Union[str, Layout] = "twitter",
) -> Dict[str, Union[str, int]]:
    """The fields of any id written as text, in order, as ``python -m idforge decode`` and the
    ``idforge`` binary print them::

        >>> idforge.describe_id("1700000000000000000")["time"]
        '2023-09-08T04:15:59.129Z'

    The kind is detected (or named by ``kind``): 24 hex characters are an ObjectId; 32 hex or
    a UUID text a UUIDv7 when its version and variant bits say so and its time is after
    1970-02-19, else a flake-128, as are 22 base62 characters that are not all digits; 26
    Crockford base32 characters a ULID; digits a snowflake, read with ``layout``. ``form`` reads
    a snowflake in a short text form (``id_from_text``'s rules). Numbers are ints; 64-bit
    values such as the snowflake's ``id`` are str, as in the binary's JSON. Text
    that is no id raises ``InvalidArgumentError``, or the error of the kind it was read as."""
    if not isinstance(text, str):
        raise TypeError(f"id text is a str, not {type(text).__name__}")
    # No id text is longer than 45 characters: a longer one is refused all the same (by its
    # length), and the cut bounds the work.
    return _native.describe_id(text[:_DESCRIBE_CUT], kind, form, layout)


def parse_uuid7(value: _UUID_INPUT) -> _uuid.UUID:
    """The UUIDv7 given as text (hyphenated, 32 hex digits, in braces or after ``urn:uuid:``,
    either case), 16 bytes, a 128-bit int or a ``uuid.UUID`` (``uuid_utils.UUID`` too). Another
    version or variant raises ``InvalidUuidError``; 16 bytes of another length,
    ``InvalidLengthError``."""
    if isinstance(value, str):
        return _native.uuid7_parse(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _native.uuid7_from_bytes(bytes(value))
    if isinstance(value, int):
        if not 0 <= value < 1 << 128:
            raise InvalidUuidError("invalid UUID: not a 128-bit value")
        return _native.uuid7_from_bytes(value.to_bytes(16, "big"))
    data = getattr(value, "bytes", None)
    if isinstance(data, bytes):
        return _native.uuid7_from_bytes(data)
    raise TypeError("parse_uuid7() takes text, 16 bytes, an int or a uuid.UUID")


def uuid7_fields(value: _UUID_INPUT) -> Uuid7Parts:
    """The fields of a UUIDv7 (anything ``parse_uuid7`` takes)."""
    n = parse_uuid7(value).int
    time_ms = n >> 80
    return Uuid7Parts(_time_or_none(time_ms), time_ms, (n >> 64) & 0xFFF, n & ((1 << 62) - 1))


def uuid7_from_fields(time_ms: int, rand_a: int, rand_b: int) -> _uuid.UUID:
    """The UUIDv7 of its fields (48, 12 and 62 bits); a time too wide raises
    ``TimeOutOfRangeError``, another field too wide ``InvalidArgumentError``."""
    return _native.uuid7_from_fields(time_ms, rand_a, rand_b)


def parse_ulid(text: str) -> str:
    """The canonical (upper-case) form of ULID text: 26 Crockford base32 characters in either
    case, with Crockford's aliases (``I``/``L`` for 1, ``O`` for 0). Anything else (another
    length, a first character above ``7``) raises ``InvalidBase32Error``."""
    return _native.ulid_from_bytes(_native.ulid_parse(text))


def ulid_fields(text: str) -> UlidParts:
    """The fields of ULID text."""
    n = int.from_bytes(_native.ulid_parse(text), "big")
    time_ms = n >> 80
    return UlidParts(_time_or_none(time_ms), time_ms, n & ((1 << 80) - 1))


def ulid_from_fields(time_ms: int, random: int) -> str:
    """The ULID text of its fields (48 and 80 bits)."""
    return _native.ulid_from_fields(time_ms, random)


def ulid_to_uuid(text: str) -> _uuid.UUID:
    """The same 128 bits as a ``uuid.UUID`` (as python-ulid's ``ULID.to_uuid()``); a ULID made
    from a UUIDv7 gives that UUIDv7 back."""
    return _uuid.UUID(bytes=_native.ulid_parse(text))


def ulid_from_uuid(value: _uuid.UUID) -> str:
    """The same 128 bits as ULID text (any UUID; a UUIDv7's time is the ULID's time)."""
    return _native.ulid_from_bytes(value.bytes)
