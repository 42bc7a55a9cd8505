"""``python -m idforge``: the ``gen`` and ``decode`` commands of the ``idforge`` command line.

Same arguments, same output and the same error lines (``idforge: error: MESSAGE (CODE)``, exit
status 2 for bad input, 1 for other failures), made with this package's API, for users who have
the wheel but not the server's binary::

    python -m idforge gen snowflake [--layout L] [--node N] [--count N] [--random-start]
                                    [--format decimal|base32|base62]
    python -m idforge gen objectid [--count N]
    python -m idforge gen flake128 [--count N] [--format base62|hex|decimal|uuid]
    python -m idforge gen uuid7 [--count N] [--format uuid|hex|ulid] [--state-file PATH]
    python -m idforge gen ulid [--count N] [--state-file PATH]
    python -m idforge decode ID [--layout L] [--type snowflake|objectid|flake128|uuid7|ulid] [--json]
    python -m idforge decode ID --form decimal|base32|base62 [--layout L] [--json]

``compose``, ``layouts``, ``serve`` and ``store`` are the binary's alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Dict, NoReturn, Optional, Sequence, TextIO, Tuple, Union

from . import (
    Flake128,
    Flake128Generator,
    Layout,
    ObjectId,
    Snowflake,
    Ulids,
    Uuid7s,
    describe_id,
    id_to_text,
    ulid_from_uuid,
)
from ._errors import IdforgeError

PROG = "idforge"
MAX_COUNT = 10_000_000
"""The most ids one ``gen`` call prints, as the binary's."""
BATCH = 4096
"""Snowflake ids taken per ``next_many`` call."""

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
# The codes that are not the input's fault (exit 1), as the binary's.
_FAILURE_CODES = {
    "CLOCK_BEHIND",
    "TIMEOUT",
    "FORKED",
    "BUFFER_FULL",
    "SOURCE_UNAVAILABLE",
    "IO",
    "PANIC",
}

_DIGITS = "0123456789"
_U64_MAX = (1 << 64) - 1
_TEXT_FORMS = ("decimal", "base32", "base62")


class _Refused(Exception):
    """A value the command refuses: reported as one error line with this code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _code_name(e: IdforgeError) -> str:
    name = getattr(e, "name", "")
    if isinstance(name, str) and name:
        return name
    return str(getattr(e, "code", "IDFORGE_ERROR"))


def _decimal(what: str, text: str) -> int:
    if not text or any(c not in _DIGITS for c in text):
        quoted = json.dumps(text, ensure_ascii=False)
        raise _Refused("INVALID_DECIMAL", f"{what} {quoted} is not a number")
    n = int(text)
    if n > _U64_MAX:
        raise _Refused("INVALID_DECIMAL", f"{what} {text} does not fit in 64 bits")
    return n


def _count(text: str) -> int:
    n = _decimal("count", text)
    if not 1 <= n <= MAX_COUNT:
        raise _Refused("INVALID_ARGUMENT", f"count {n} is out of range (1 to {MAX_COUNT})")
    return n


def _gen_snowflake(out: TextIO, args: argparse.Namespace) -> None:
    ids = Snowflake(args.layout, node_id=args.node, random_start=args.random_start)
    left = args.count
    while left > 0:
        n = min(left, BATCH)
        if args.format == "decimal":
            out.write("".join(f"{i}\n" for i in ids.next_many(n)))
        else:
            out.write("".join(id_to_text(i, args.format) + "\n" for i in ids.next_many(n)))
        left -= n


def _gen_objectid(out: TextIO, args: argparse.Namespace) -> None:
    for _ in range(args.count):
        out.write(f"{ObjectId()}\n")


_FLAKE_FORMATS: Dict[str, Callable[[Flake128], str]] = {
    "base62": lambda f: f.base62,
    "hex": lambda f: f.hex,
    "decimal": lambda f: str(int(f)),
    "uuid": lambda f: str(f.uuid),
}


def _gen_flake128(out: TextIO, args: argparse.Namespace) -> None:
    ids = Flake128Generator()
    write = _FLAKE_FORMATS[args.format]
    for _ in range(args.count):
        out.write(write(ids.next()) + "\n")


_UUID7_FORMATS: Dict[str, Callable[[Any], str]] = {
    "uuid": str,
    "hex": lambda u: u.hex,
    "ulid": ulid_from_uuid,
}


def _gen_batches(ids: Union[Uuid7s, Ulids], out: TextIO, count: int, write: Callable[[Any], str]) -> None:
    left = count
    while left > 0:
        n = min(left, BATCH)
        out.write("".join(f"{write(u)}\n" for u in ids.next_many(n)))
        left -= n


def _gen_uuid7(out: TextIO, args: argparse.Namespace) -> None:
    _gen_batches(Uuid7s(args.state_file), out, args.count, _UUID7_FORMATS[args.format])


def _gen_ulid(out: TextIO, args: argparse.Namespace) -> None:
    _gen_batches(Ulids(args.state_file), out, args.count, str)


def _decode(out: TextIO, args: argparse.Namespace) -> None:
    # The runtime's rules, as the binary's: detection, fields, times.
    rows = describe_id(args.id, args.type, form=args.form, layout=args.layout)
    if args.json:
        # As serde_json prints a map: keys sorted, no spaces, text as it is.
        text = json.dumps(rows, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        out.write(text + "\n")
    else:
        out.write("".join(f"{key:<10}{value}\n" for key, value in rows.items()))


class _Parser(argparse.ArgumentParser):
    """argparse, with its usage errors reported as the binary's: on stderr, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{PROG}: error: {message}\n")


class _BadValue:
    """An option's value its converter refused: reported after parsing as the binary reports
    it (argparse would print its own message, without the code)."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _checked(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    def wrapped(text: str) -> Any:
        try:
            return convert(text)
        except (_Refused, IdforgeError) as e:
            return _BadValue(e)

    return wrapped


def _parser() -> argparse.ArgumentParser:
    layout = _checked(Layout.parse)
    count = _checked(_count)
    node = _checked(lambda t: _decimal("node", t))
    layout_help = (
        "a preset (twitter, discord, instagram, sonyflake, baidu, js_safe) or a spec "
        "epoch=MS,tick=MS,time=BITS,node=BITS,seq=BITS (then optionally ,order=time_seq_node and "
        ",unsigned) (default: twitter)"
    )
    p = _Parser(
        prog=PROG,
        allow_abbrev=False,
        description="Unique ids: generate and decode snowflake, ObjectId, flake-128, UUIDv7 and ULID ids "
        "(the gen and decode commands of the idforge binary).",
    )
    commands = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    gen = commands.add_parser("gen", help="generate ids, one per line")
    kinds = gen.add_subparsers(dest="kind", metavar="KIND", parser_class=_Parser)
    kinds.required = True
    count_help = f"how many ids (1 to {MAX_COUNT})"
    sf = kinds.add_parser("snowflake", allow_abbrev=False, help="64-bit snowflake ids, in decimal")
    sf.add_argument("--layout", metavar="NAME|SPEC", type=layout, default="twitter", help=layout_help)
    sf.add_argument("--node", metavar="N", type=node, default="0", help="the node id (fits the layout)")
    sf.add_argument("--count", metavar="N", type=count, default="1", help=count_help)
    sf.add_argument(
        "--random-start",
        action="store_true",
        help="start each tick's sequence at a random value below half its range instead of 0, so "
        "that id %% n spreads evenly over shards at low rates (a tick then holds at least half "
        "its sequence range)",
    )
    sf.add_argument(
        "--format",
        choices=list(_TEXT_FORMS),
        default="decimal",
        help="how to write each id: decimal, base32 (13 Crockford characters, TSID's form) or "
        "base62 (11 characters); both short forms sort like the ids",
    )
    sf.set_defaults(run=_gen_snowflake)
    oid = kinds.add_parser("objectid", allow_abbrev=False, help="MongoDB ObjectIds, as 24 lower-case hex characters")
    oid.add_argument("--count", metavar="N", type=count, default="1", help=count_help)
    oid.set_defaults(run=_gen_objectid)
    fl = kinds.add_parser("flake128", allow_abbrev=False, help="128-bit flake ids (time | random worker | sequence)")
    fl.add_argument("--count", metavar="N", type=count, default="1", help=count_help)
    fl.add_argument("--format", choices=list(_FLAKE_FORMATS), default="base62", help="how to write each id")
    fl.set_defaults(run=_gen_flake128)
    u7 = kinds.add_parser("uuid7", allow_abbrev=False, help="UUIDv7s (RFC 9562), hyphenated lower case")
    u7.add_argument("--count", metavar="N", type=count, default="1", help=count_help)
    u7.add_argument("--format", choices=list(_UUID7_FORMATS), default="uuid", help="how to write each id")
    state_help = (
        "keep a high-water time in this file, so that the ids of the next run are greater even if "
        "the clock went back meanwhile"
    )
    u7.add_argument("--state-file", metavar="PATH", help=state_help)
    u7.set_defaults(run=_gen_uuid7)
    ul = kinds.add_parser("ulid", allow_abbrev=False, help="ULIDs, 26 upper-case Crockford base32 characters")
    ul.add_argument("--count", metavar="N", type=count, default="1", help=count_help)
    ul.add_argument("--state-file", metavar="PATH", help=state_help)
    ul.set_defaults(run=_gen_ulid)
    dec = commands.add_parser("decode", allow_abbrev=False, help="split an id into its fields")
    dec.add_argument(
        "id",
        metavar="ID",
        help="decimal (snowflake), 24 hex (ObjectId), base62, 32 hex or UUID (flake-128 or UUIDv7), "
        "26 base32 (ULID)",
    )
    dec.add_argument("--layout", metavar="NAME|SPEC", type=layout, default="twitter", help=layout_help)
    kind = dec.add_mutually_exclusive_group()
    kind.add_argument(
        "--type",
        choices=["snowflake", "objectid", "flake128", "uuid7", "ulid"],
        help="the id's type, instead of detecting it",
    )
    kind.add_argument(
        "--form",
        choices=list(_TEXT_FORMS),
        help="read the id as a snowflake written in this form (only its one text: base32 in "
        "either case, no leading zero in decimal)",
    )
    dec.add_argument("--json", action="store_true", help="print one JSON object")
    dec.set_defaults(run=_decode)
    return p


def _report(err: TextIO, code: str, message: str) -> int:
    err.write(f"{PROG}: error: {message} ({code})\n")
    err.flush()
    return EXIT_FAILURE if code in _FAILURE_CODES else EXIT_USAGE


def main(
    argv: Optional[Sequence[str]] = None,
    out: Optional[TextIO] = None,
    err: Optional[TextIO] = None,
) -> int:
    """Runs one command with ``argv`` (without the program name; default ``sys.argv[1:]``);
    returns the exit status."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    args = _parser().parse_args(argv)
    for value in vars(args).values():
        if isinstance(value, _BadValue):
            return _report(err, *_described(value.error))
    try:
        args.run(out, args)
        out.flush()
    except BrokenPipeError:
        # The reader went away (`| head -1`): a quiet success, as the binary's. Python would
        # flush stdout once more at exit and complain: point it at /dev/null first.
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (_Refused, IdforgeError) as e:
        return _report(err, *_described(e))
    return EXIT_OK


def _described(e: Exception) -> Tuple[str, str]:
    if isinstance(e, _Refused):
        return e.code, str(e)
    if isinstance(e, IdforgeError):
        return _code_name(e), str(e)
    return "INVALID_ARGUMENT", str(e)


if __name__ == "__main__":
    sys.exit(main())
