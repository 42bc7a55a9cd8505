"""``python -m idforge``: the binary's ``gen`` and ``decode`` from the package, with the same
output and error lines (compared with the binary itself when IDFORGE_BIN names it)."""

import io
import json
import os
import subprocess
import sys
import uuid

import pytest
from conftest import load, required_env

import idforge
from idforge.__main__ import main


# `python -m` puts the working directory first on sys.path: run it away from python/, whose
# idforge/ folder has no native module, so that the installed package is what runs.
AWAY = os.path.dirname(os.path.abspath(sys.executable))


def run(*args, check_status=None):
    """``python -m idforge ARGS``: (status, stdout, stderr)."""
    p = subprocess.run(
        [sys.executable, "-m", "idforge", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=AWAY,
    )
    if check_status is not None:
        assert p.returncode == check_status, (args, p.returncode, p.stdout, p.stderr)
    return p.returncode, p.stdout, p.stderr


def ok(*args):
    return run(*args, check_status=0)[1]


def field(text, key):
    for line in text.splitlines():
        if line[:10].rstrip() == key:
            return line[10:]
    raise AssertionError(f"no {key} in {text!r}")


TWITTER_ID = 1_212_161_842_325_159_937


def test_decode_a_known_twitter_id_as_the_binary_prints_it():
    node, seq, tick = (TWITTER_ID >> 12) & 0x3FF, TWITTER_ID & 0xFFF, TWITTER_ID >> 22
    time_ms = tick + 1_288_834_974_657
    assert ok("decode", str(TWITTER_ID)) == (
        "type      snowflake\n"
        "layout    twitter\n"
        f"id        {TWITTER_ID}\n"
        "time      2020-01-01T00:01:18.745Z\n"
        f"time_ms   {time_ms}\n"
        f"node      {node}\n"
        f"sequence  {seq}\n"
        f"tick      {tick}\n"
    )
    # serde_json's map: keys sorted, no spaces, 64-bit ids as text.
    assert ok("decode", str(TWITTER_ID), "--json") == (
        f'{{"id":"{TWITTER_ID}","layout":"twitter","node":{node},"sequence":{seq},'
        f'"tick":{tick},"time":"2020-01-01T00:01:18.745Z","time_ms":{time_ms},'
        '"type":"snowflake"}\n'
    )
    spec = "epoch=1288834974657,tick=1,time=41,node=10,seq=12"
    text = ok("decode", str(TWITTER_ID), "--type", "snowflake", "--layout", spec)
    assert field(text, "time") == "2020-01-01T00:01:18.745Z"


@pytest.mark.parametrize(
    "hex_id,time,secs",
    [
        ("ffffffff0000000000000000", "2106-02-07T06:28:15Z", 4_294_967_295),
        ("7fffffff0000000000000000", "2038-01-19T03:14:07Z", 2_147_483_647),
        ("000000000000000000000000", "1970-01-01T00:00:00Z", 0),
        ("80000000AABBCC1234000001", "2038-01-19T03:14:08Z", 2_147_483_648),
    ],
)
def test_decode_objectids_from_the_spec_table(hex_id, time, secs):
    text = ok("decode", hex_id)
    assert text == (
        f"type      objectid\nid        {hex_id.lower()}\ntime      {time}\ntimestamp {secs}\n"
    )
    decoded = json.loads(ok("decode", "--json", hex_id, "--type", "objectid"))
    assert decoded == {"type": "objectid", "id": hex_id.lower(), "time": time, "timestamp": secs}


def test_decode_flake128_in_every_form():
    f = idforge.Flake128.from_parts(1_700_000_000_123, 0xABC, 7)
    for text in [f.base62, f.hex, str(f.uuid)]:
        out = ok("decode", text)
        assert out == (
            "type      flake128\n"
            f"id        {f.base62}\n"
            "time      2023-11-14T22:13:20.123Z\n"
            "time_ms   1700000000123\n"
            "worker    000000000abc\n"
            "sequence  7\n"
        ), text


def test_times_past_9999_and_at_the_edges():
    # The binary writes years past 9999 with more digits; datetime cannot reach them.
    def time_of(ms):
        return field(ok("decode", "--type", "flake128", idforge.Flake128.from_parts(ms, 1, 0).base62), "time")

    assert time_of(0) == "1970-01-01T00:00:00.000Z"
    assert time_of(951_782_400_000) == "2000-02-29T00:00:00.000Z"
    assert time_of(253_402_300_799_999) == "9999-12-31T23:59:59.999Z"
    assert time_of(253_402_300_800_000) == "10000-01-01T00:00:00.000Z"
    assert field(ok("decode", "ffffffff0000000000000000"), "time") == "2106-02-07T06:28:15Z"


def test_gen_snowflake_objectid_and_flake128():
    ids = [int(line) for line in ok("gen", "snowflake", "--node", "9", "--count", "5000").split()]
    assert len(ids) == 5000 and ids == sorted(set(ids))
    assert {(i >> 12) & 0x3FF for i in ids} == {9}
    assert field(ok("decode", str(ids[0])), "node") == "9"
    # The short forms sort like the ids and decode back to them.
    for form, width in (("base32", 13), ("base62", 11)):
        texts = ok("gen", "snowflake", "--node", "9", "--count", "3000", "--format", form).split()
        assert texts == sorted(set(texts)) and {len(t) for t in texts} == {width}
        assert field(ok("decode", texts[0], "--form", form), "node") == "9"
    # A layout spec and a preset by another spelling.
    one = ok("gen", "snowflake", "--layout", "Js-Safe").strip()
    assert int(one) < 2**53
    oids = ok("gen", "objectid", "--count", "3").split()
    assert len(oids) == 3 and all(len(o) == 24 and o == o.lower() for o in oids)
    assert field(ok("decode", oids[0]), "type") == "objectid"
    assert len(ok("gen", "flake128").strip()) == 22  # base62 by default
    for form in ["base62", "hex", "decimal", "uuid"]:
        lines = ok("gen", "flake128", "--count", "20", "--format", form).split()
        if form == "decimal":
            flakes = [idforge.Flake128(int(x)) for x in lines]
        elif form == "uuid":
            flakes = [idforge.Flake128.from_uuid(uuid.UUID(x)) for x in lines]
        else:
            flakes = [idforge.Flake128(x) for x in lines]
        assert len(flakes) == 20 and flakes == sorted(flakes), form
        assert len({f.worker for f in flakes}) == 1
        if form != "decimal":
            assert field(ok("decode", lines[0]), "id") == flakes[0].base62


BAD = [
    (["decode", "not-an-id!"], "INVALID_ARGUMENT"),
    # A word is not an id (base62, but not the 22 characters of a flake-128).
    (["decode", "nope"], "INVALID_ARGUMENT"),
    (["decode", ""], "INVALID_ARGUMENT"),
    (["decode", "99999999999999999999"], "INVALID_DECIMAL"),
    (["decode", "9223372036854775808"], "INVALID_ARGUMENT"),
    (["decode", "12", "--type", "objectid"], "INVALID_HEX"),
    (["decode", "1x", "--type", "snowflake"], "INVALID_DECIMAL"),
    (["decode", "a!", "--type", "flake128"], "INVALID_BASE62"),
    (["decode", "1", "--layout", "nope"], "INVALID_LAYOUT"),
    (["gen", "snowflake", "--count", "0"], "INVALID_ARGUMENT"),
    (["gen", "snowflake", "--count", "-1"], "INVALID_DECIMAL"),
    (["gen", "objectid", "--count", "10000001"], "INVALID_ARGUMENT"),
    (["gen", "snowflake", "--node", "1024"], "NODE_OUT_OF_RANGE"),
    (["gen", "snowflake", "--node", "x"], "INVALID_DECIMAL"),
    (["gen", "uuid7", "--count", "0"], "INVALID_ARGUMENT"),
    (["gen", "ulid", "--count", "x"], "INVALID_DECIMAL"),
    (["decode", "00000000-0001-4001-8000-000000000001", "--type", "uuid7"], "INVALID_UUID"),
    (["decode", "01ARYZ6S4128T5CY4TQKFF04HU", "--type", "ulid"], "INVALID_BASE32"),
]


@pytest.mark.parametrize("args,code", BAD)
def test_bad_input_is_one_line_with_a_code_and_exit_2(args, code):
    status, out, err = run(*args)
    assert (status, out) == (2, ""), (args, err)
    assert err.startswith("idforge: error: ") and err.endswith(f" ({code})\n"), err
    assert err.count("\n") == 1, err


def test_usage_errors_exit_2():
    status, _, err = run("gen")
    assert status == 2 and "idforge: error:" in err
    status, _, err = run("frobnicate")
    assert status == 2
    status, out, _ = run("--help")
    assert status == 0 and "gen" in out and "decode" in out


def test_a_reader_that_goes_away_ends_the_run_quietly():
    p = subprocess.Popen(
        [sys.executable, "-m", "idforge", "gen", "snowflake", "--count", "2000000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=AWAY,
    )
    assert p.stdout.readline().strip().isdigit()
    p.stdout.close()
    assert p.wait(timeout=120) == 0
    assert p.stderr.read() == b""


def test_gen_and_decode_uuid7_and_ulid():
    uuids = ok("gen", "uuid7", "--count", "5000").split()
    assert len(uuids) == 5000 and uuids == sorted(uuids) and len(set(uuids)) == 5000
    assert all(uuid.UUID(u).version == 7 for u in uuids)
    ulids = ok("gen", "ulid", "--count", "3").split()
    assert len(ulids) == 3 and ulids == sorted(ulids) and all(len(u) == 26 for u in ulids)
    text = ok("decode", "018bcfe5-687b-7abc-8123-456789abcdef")
    assert text == (
        "type      uuid7\n"
        "id        018bcfe5-687b-7abc-8123-456789abcdef\n"
        "time      2023-11-14T22:13:20.123Z\n"
        "time_ms   1700000000123\n"
        "rand_a    2748\n"
        "rand_b    81985529216486895\n"
        "ulid      01HF7YAT3VFAY828T5CY4TQKFF\n"
    )
    # Every spelling a UUIDv7 parser takes, and the 32-digit form, is detected.
    for form in ("018BCFE5687B7ABC8123456789ABCDEF", "018bcfe5-687b-7abc-8123-456789abcdef"):
        assert field(ok("decode", form), "type") == "uuid7"
    assert json.loads(ok("decode", "01ARYZ6S4128T5CY4TQKFF04HM", "--json")) == {
        "type": "ulid",
        "id": "01ARYZ6S4128T5CY4TQKFF04HM",
        "time": "2016-07-30T22:36:16.385Z",
        "time_ms": 1469918176385,
        "random": "123456789abcdef01234",
        "uuid": "01563df3-6481-1234-5678-9abcdef01234",
    }
    assert field(ok("decode", "01aryz6s4128t5cy4tqkff04hm"), "id") == "01ARYZ6S4128T5CY4TQKFF04HM"
    # Crockford's aliases only with --type (as the binary); 26 digits are a ULID too.
    assert field(ok("decode", "0IARYZ6S4128T5CY4TQKFF04HM", "--type", "ulid"), "id") == "01ARYZ6S4128T5CY4TQKFF04HM"
    assert field(ok("decode", "0" * 26), "type") == "ulid"
    hexes = ok("gen", "uuid7", "--count", "3", "--format", "hex").split()
    assert all(len(h) == 32 and uuid.UUID(h).version == 7 for h in hexes)
    as_ulid = ok("gen", "uuid7", "--format", "ulid").strip()
    assert idforge.ulid_to_uuid(as_ulid).version == 7
    # A flake-128's UUID form keeps decoding as one: its top 16 bits are zero until 10889.
    f = idforge.Flake128.from_parts(1_700_000_000_123, 0xABC, 0x7000)
    assert field(ok("decode", str(f.uuid)), "type") == "flake128"


def test_main_in_process():
    out, err = io.StringIO(), io.StringIO()
    assert main(["decode", str(TWITTER_ID)], out, err) == 0
    assert field(out.getvalue(), "time") == "2020-01-01T00:01:18.745Z"
    out, err = io.StringIO(), io.StringIO()
    assert main(["decode", "nope"], out, err) == 2
    assert err.getvalue().endswith("(INVALID_ARGUMENT)\n")


def binary():
    return required_env("IDFORGE_BIN", "ci/test.sh")


def test_the_same_output_and_errors_as_the_binary():
    bin_path = binary()
    f = idforge.Flake128.from_parts(1_700_000_000_123, 0xABC, 7)
    cases = [
        ["decode", str(TWITTER_ID)],
        ["decode", str(TWITTER_ID), "--json"],
        ["decode", "0"],
        ["decode", "18446744073709551615", "--layout", "sonyflake"],
        ["decode", "18446744073709551615", "--layout", "twitter"],
        ["decode", "123", "--type", "flake128"],
        ["decode", "ffffffff0000000000000000", "--json"],
        ["decode", f.base62, "--json"],
        ["decode", str(f.uuid)],
        ["decode", "1", "--layout", "epoch=1,tick=10,time=41,node=10,seq=12,order=time_seq_node"],
        ["decode", "018bcfe5-687b-7abc-8123-456789abcdef"],
        ["decode", "018BCFE5687B7ABC8123456789ABCDEF", "--json"],
        ["decode", "00000000-0001-7001-8000-000000000001"],
        ["decode", "00000000-0001-7001-8000-000000000001", "--type", "uuid7"],
        ["decode", "01ARYZ6S4128T5CY4TQKFF04HM", "--json"],
        ["decode", "01aryz6s4128t5cy4tqkff04hm"],
        ["decode", "0IARYZ6S4128T5CY4TQKFF04HM"],
        ["decode", "0IARYZ6S4128T5CY4TQKFF04HM", "--type", "ulid"],
        ["decode", "0" * 26],
        ["decode", "7ZZZZZZZZZFZZVZZZZZZZZZZZZ"],
        ["decode", "1V18MJ9CM0000", "--form", "base32"],
        ["decode", "1v18mj9cm0000", "--form", "base32", "--json"],
        ["decode", "2X8GxDHhRiK", "--form", "base62"],
        ["decode", "2127129017852100608", "--form", "decimal", "--layout", "twitter"],
        ["decode", "1V18MJ9CM000O", "--form", "base32"],
        ["decode", "0123", "--form", "decimal"],
        ["decode", "2X8GxDHhRi", "--form", "base62"],
        *[args for args, _ in BAD],
    ]
    for args in cases:
        mine = run(*args)
        theirs = subprocess.run([bin_path, *args], capture_output=True, text=True, timeout=60)
        assert mine[0] == theirs.returncode, (args, mine, theirs.stderr)
        assert mine[1] == theirs.stdout, args
        if theirs.returncode:
            # The same code; the message too where both read the value the same way.
            assert mine[2].rsplit(" (", 1)[1] == theirs.stderr.rsplit(" (", 1)[1], (args, mine, theirs)


def _vector_cases():
    """``decode`` command lines for every id of the shared vectors (core/testdata), accepted or
    refused, read by detection and by type."""
    sf, oid, fl, u7, ul, txt = (
        load(f"{n}.json") for n in ("snowflake", "objectid", "flake128", "uuid7", "ulid", "id_text")
    )
    def spec(layout):
        # A preset's name, or a layout's fields as the spec text.
        if isinstance(layout, str):
            return layout
        text = (
            f"epoch={layout['epoch_ms']},tick={layout['tick_ms']},time={layout['time_bits']},"
            f"node={layout['node_bits']},seq={layout['seq_bits']},order={layout['order']}"
        )
        return text + (",unsigned" if layout["unsigned"] else "")

    cases = []
    for r in sf["compose"] + sf["invalid_decompose"]:
        cases.append(["decode", r["id"], "--layout", spec(r["layout"]), "--json"])
    for r in oid["timestamps"] + oid["legacy"]:
        cases += [["decode", r["hex"], "--json"], ["decode", r["hex"], "--type", "objectid"]]
    cases += [["decode", r["input"], "--type", "objectid"] for r in oid["invalid_hex"]]
    for r in fl["parts"]:
        cases += [["decode", r["hex"], "--json"], ["decode", r["base62"], "--type", "flake128", "--json"]]
    cases += [["decode", r["input"], "--type", "flake128"] for r in fl["invalid_base62"] + fl["invalid_hex"]]
    for r in u7["fields"]:
        cases += [["decode", r["text"], "--json"], ["decode", r["text"], "--type", "uuid7"]]
    for r in u7["parse"] + u7["refuse"]:
        cases += [["decode", r["input"]], ["decode", r["input"], "--type", "uuid7"]]
    for r in ul["fields"]:
        cases += [["decode", r["text"], "--json"], ["decode", r["text"], "--type", "ulid"]]
    for r in ul["parse"] + ul["refuse"]:
        cases += [["decode", r["input"]], ["decode", r["input"], "--type", "ulid"]]
    for r in txt["ids"]:
        cases += [["decode", r[form], "--form", form, "--json"] for form in ("decimal", "base32", "base62")]
    cases += [["decode", r["text"], "--form", r["form"]] for r in txt["parse"] + txt["errors"]]
    return cases


def test_every_shared_vector_decodes_as_the_binary_decodes_it():
    # In process (a few hundred command lines): the same output, exit status and error code.
    bin_path = binary()
    cases = _vector_cases()
    assert len(cases) > 300
    for args in cases:
        out, err = io.StringIO(), io.StringIO()
        status = main(args, out=out, err=err)
        theirs = subprocess.run([bin_path, *args], capture_output=True, text=True, timeout=60)
        assert (status, out.getvalue()) == (theirs.returncode, theirs.stdout), args
        if status:
            assert err.getvalue().rsplit(" (", 1)[1] == theirs.stderr.rsplit(" (", 1)[1], (args, err.getvalue())
