"""The idforge extension against a real PostgreSQL 15 (ci/steps/pg-extension.sh starts it with the
extension preloaded and idforge.node_id = IDFORGE_PGEXT_NODE). The tests run in file order; the
ones that restart the server come last."""

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from pgext import (
    ENV, MAX_TEXT_MS, NODE, STATE_FILE, SqlError, finish, one, read_state_file, restart,
    sessions_of_ids, signed, spec, sql, start_psql, ts_of_ms, wait_ready, while_stopped,
    write_state_file,
)

ROOT = Path(__file__).resolve().parents[3]
VECTORS = json.loads((ROOT / "core/testdata/snowflake.json").read_text())
# The times a test can write as a literal (up to 9999-12-31).
MAX_PG_MS = MAX_TEXT_MS


def ms_of(ts_expr: str) -> str:
    return f"(extract(epoch from {ts_expr}) * 1000)::bigint"


def test_create_extension_and_node_setting():
    sql("DROP EXTENSION IF EXISTS idforge")
    sql("CREATE EXTENSION idforge")
    assert one("SHOW idforge.node_id") == str(NODE)
    # The node is the cluster's identity: fixed at server start.
    with pytest.raises(SqlError) as e:
        sql("SET idforge.node_id = 3")
    assert e.value.sqlstate == "55P02", e.value  # cant_change_runtime_param


def test_snowflake_ids_carry_the_node_and_the_time():
    before = int(time.time() * 1000)
    ids = [int(r[0]) for r in sql("SELECT idforge_snowflake() FROM generate_series(1, 1000)")]
    after = int(time.time() * 1000)
    assert ids == sorted(ids) and len(set(ids)) == 1000
    rows = sql(f"SELECT {ms_of('time')}, node, seq FROM idforge_decode({ids[-1]}, 'twitter')")
    time_ms, node, _seq = map(int, rows[0])
    assert node == NODE
    # Within the generators' 3 s lead over the clock.
    assert before - 5 <= time_ms <= after + 3_000
    # Another layout, by name and written out; sonyflake's order puts the node last.
    sony = int(one("SELECT idforge_snowflake('sonyflake')"))
    assert sony & 0xFFFF == NODE
    custom = "epoch=1577836800000,tick=1,time=41,node=10,seq=12"
    cid = int(one(f"SELECT idforge_snowflake('{custom}')"))
    assert int(one(f"SELECT node FROM idforge_decode({cid}, '{custom}')")) == NODE
    # NULL in, NULL out (STRICT), as PostgreSQL's own functions.
    assert sql("SELECT idforge_snowflake(NULL) IS NULL") == [["t"]]


def test_errors_are_postgres_errors_with_the_idforge_name():
    cases = [
        ("SELECT idforge_snowflake('nope')", "22023", "INVALID_LAYOUT:"),
        # idforge.node_id = 7 does not fit a 2-bit node field.
        ("SELECT idforge_snowflake('epoch=1577836800000,tick=1,time=41,node=2,seq=12')",
         "22023", "NODE_OUT_OF_RANGE:"),
        ("SELECT idforge_compose(now(), 'twitter', -1, 0)", "22023", "NODE_OUT_OF_RANGE:"),
        ("SELECT idforge_compose(now(), 'twitter', 0, 4096)", "22023", "SEQUENCE_OUT_OF_RANGE:"),
        ("SELECT idforge_compose(now(), 'twitter', 0, -1)", "22023", "SEQUENCE_OUT_OF_RANGE:"),
        ("SELECT idforge_compose('2001-01-01', 'twitter', 0, 0)", "22008", "TIME_OUT_OF_RANGE:"),
        ("SELECT idforge_compose('1969-12-31', 'twitter', 0, 0)", "22008", "TIME_OUT_OF_RANGE:"),
        ("SELECT * FROM idforge_bounds('infinity', 'twitter')", "22008", "TIME_OUT_OF_RANGE:"),
        ("SELECT * FROM idforge_bounds('-infinity', 'twitter')", "22008", "TIME_OUT_OF_RANGE:"),
        # A negative bigint is a u64 past 2^63: not an id of a signed layout.
        ("SELECT * FROM idforge_decode(-1, 'twitter')", "22023", "INVALID_ARGUMENT:"),
        ("SELECT * FROM idforge_decode(1, 'twitter,')", "22023", "INVALID_LAYOUT:"),
        # The worst length: refused before it is parsed (PostgreSQL's text goes to 1 GB).
        ("SELECT idforge_snowflake(repeat('x', 10000000))", "22023", "INVALID_LAYOUT: a layout"),
        ("SELECT * FROM idforge_decode(1, repeat('epoch=0,', 100000))", "22023", "INVALID_LAYOUT:"),
    ]
    for query, state, prefix in cases:
        with pytest.raises(SqlError) as e:
            sql(query)
        assert (e.value.sqlstate, e.value.message[: len(prefix)]) == (state, prefix), query
    # The session goes on after an error.
    assert int(one("SELECT idforge_snowflake()")) > 0


def test_compose_and_decode_agree_with_the_shared_vectors():
    rows, checked = [], 0
    for row in VECTORS["compose"]:
        time_ms, node, seq = int(row["time_ms"]), int(row["node"]), int(row["seq"])
        if time_ms > MAX_PG_MS or node >= 1 << 63 or seq >= 1 << 63:
            continue  # past what timestamptz or bigint hold
        rows.append((spec(row["layout"]), time_ms, node, seq, signed(int(row["id"]))))
    values = ",".join(f"('{l}', {ts_of_ms(t)}, {n}, {s}, {i})" for l, t, n, s, i in rows)
    got = sql(
        "SELECT v.id, idforge_compose(v.t, v.l, v.n, v.s), "
        + ms_of("d.time") + ", d.node, d.seq "
        f"FROM (VALUES {values}) AS v(l, t, n, s, id), LATERAL idforge_decode(v.id, v.l) d"
    )
    assert len(got) == len(rows) >= 60
    for (l, t, n, s, i), (gid, composed, dt, dn, ds) in zip(rows, got):
        assert (int(gid), int(composed), int(dt), int(dn), int(ds)) == (i, i, t, n, s), l
        checked += 1
    # bounds: the smallest and largest ids of a tick.
    for row in VECTORS["bounds_at"]:
        if int(row["time_ms"]) > MAX_PG_MS:
            continue
        got = sql(f"SELECT * FROM idforge_bounds({ts_of_ms(int(row['time_ms']))}, "
                  f"'{spec(row['layout'])}')")
        assert got == [[str(signed(int(row["min"]))), str(signed(int(row["max"])))]], row
        checked += 1
    for row in VECTORS["invalid_compose"]:
        if int(row["tick"]) > 1 << 40 or int(row["node"]) >= 1 << 63 or int(row["seq"]) >= 1 << 63:
            continue
        layout = spec(row["layout"])
        lay = next((p for p in VECTORS["presets"] if p.get("name") == row["layout"]), row["layout"])
        if isinstance(lay, str):
            continue
        t = int(lay["epoch_ms"]) + int(row["tick"]) * int(lay["tick_ms"])
        if t > MAX_PG_MS:
            continue
        with pytest.raises(SqlError) as e:
            sql(f"SELECT idforge_compose({ts_of_ms(t)}, '{layout}', {row['node']}, {row['seq']})")
        assert e.value.message.startswith(row["error"] + ":"), (row, e.value)
        checked += 1
    assert checked >= 80


def test_decode_agrees_with_the_idforge_cli():
    cli = os.environ["IDFORGE_BIN"]
    for layout in ("twitter", "sonyflake", "discord", "instagram", "js_safe"):
        sid = int(one(f"SELECT idforge_snowflake('{layout}')"))
        unsigned = sid + (1 << 64) if sid < 0 else sid
        out = json.loads(subprocess.run(
            [cli, "decode", str(unsigned), "--layout", layout, "--json"],
            check=True, capture_output=True, text=True).stdout)
        row = sql(f"SELECT {ms_of('time')}, node, seq FROM idforge_decode({sid}, '{layout}')")[0]
        assert [int(v) for v in row] == [out["time_ms"], out["node"], out["sequence"]], layout


def test_eight_sessions_share_one_generator():
    sessions_of_ids("idforge_snowflake()", 8, 100_000, int)


def test_parallel_workers_draw_from_the_same_generator():
    # PARALLEL SAFE: a parallel query runs the function in worker processes too, which share
    # the generator like any backend.
    sql("DROP TABLE IF EXISTS wide")
    sql("CREATE TABLE wide AS SELECT g FROM generate_series(1, 400000) g")
    sql("ANALYZE wide")
    settings = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
                "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; ")
    query = "SELECT idforge_snowflake() AS id FROM wide"
    plan = "\n".join(r[0] for r in sql(settings + "EXPLAIN (ANALYZE, COSTS OFF) " + query))
    launched = re.search(r"Workers Launched: (\d+)", plan)
    assert launched and int(launched.group(1)) >= 1, plan
    got = sql(settings + f"SELECT count(*), count(DISTINCT id) FROM ({query}) t")
    assert got == [["400000", "400000"]]
    sql("DROP TABLE wide")


def test_a_default_column_filled_by_four_sessions():
    sql("DROP TABLE IF EXISTS orders")
    sql("CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT idforge_snowflake(), n int)")
    # Many small transactions each, interleaving with the other sessions.
    script = "; ".join(
        f"INSERT INTO orders (n) SELECT g FROM generate_series({k * 1000}, {k * 1000 + 999}) g"
        for k in range(25)
    )
    sessions = [start_psql(script) for _ in range(4)]
    for p in sessions:
        finish(p)
    assert sql("SELECT count(*), count(DISTINCT id), min(id) > 0 FROM orders") == [
        ["100000", "100000", "t"]
    ]
    # A time range of the table by its ids alone.
    got = one(
        "SELECT count(*) FROM orders, idforge_bounds(now() - interval '1 hour') lo, "
        "idforge_bounds(now() + interval '1 hour') hi WHERE id BETWEEN lo.min AND hi.max"
    )
    assert got == "100000"
    sql("DROP TABLE orders")


def test_objectid_and_flake128():
    # The ids' times lie between the clock read before the sessions and after them (a second's
    # slack below for ObjectId's whole seconds, 5 above: ids may lead the clock a little): a
    # bound that holds however slow the machine (under qemu, 11 s passed between the last id and
    # a clock read after the checks below).
    before = time.time()
    sessions = [
        start_psql("COPY (SELECT idforge_objectid(), idforge_flake128() "
                   "FROM generate_series(1, 50000)) TO STDOUT")
        for _ in range(4)
    ]
    oids, flakes = [], []
    for p in sessions:
        rows = [line.split("\t") for line in finish(p)]
        oids += [r[0] for r in rows]
        session_flakes = [r[1] for r in rows]
        # uuid text order is the ids' order.
        assert session_flakes == sorted(session_flakes)
        flakes += session_flakes
    after = time.time()
    assert len(set(oids)) == len(oids) == 200_000
    assert len(set(flakes)) == len(flakes) == 200_000
    assert all(len(o) == 24 and all(c in "0123456789abcdef" for c in o) for o in oids)
    for o in (oids[0], oids[-1]):
        assert before - 1 <= int(o[:8], 16) <= after + 5
    # The flake's first 8 bytes are its Unix ms.
    for f in (flakes[0], flakes[-1]):
        assert (before - 1) * 1000 <= int(f.replace("-", "")[:16], 16) <= (after + 5) * 1000
    before = time.time()
    raw = one("SELECT encode(idforge_objectid_bytes(), 'hex')")
    after = time.time()
    assert len(raw) == 24 and before - 1 <= int(raw[:8], 16) <= after + 5


def test_a_restart_resumes_after_the_state_file():
    last = int(one("SELECT idforge_snowflake()"))
    last_flake = one("SELECT idforge_flake128()")
    last_ms = int(one(f"SELECT {ms_of('time')} FROM idforge_decode({last})"))
    mark = read_state_file()
    # Every id returned lies at least half a window (1 s) before the mark.
    assert mark - 1_000 > last_ms, "an id was returned past the persisted mark"
    # Crashes (immediate stops) and quick restarts, one after another: the ids go on after the
    # last run's (every id lies before mark - 1 s), at once, without drifting ahead of the clock
    # further than the lead.
    for _ in range(6):
        restart(mode="immediate")
        first = int(one("SELECT idforge_snowflake()"))
        first_ms = int(one(f"SELECT {ms_of('time')} FROM idforge_decode({first})"))
        assert first > last and first_ms > mark - 1_000, (first_ms, mark)
        flake = one("SELECT idforge_flake128()")
        assert flake > last_flake
        last, last_flake, mark = first, flake, read_state_file()
        assert mark - time.time() * 1000 < 3_000, "the mark drifts ahead of the clock"
    # A clock one hour behind the last run's ids, as if stepped back while the server was down
    # (the same as a mark an hour ahead of the clock): no id at all, CLOCK_BEHIND.
    hour_ahead = int(time.time() * 1000) + 3_600_000
    while_stopped(lambda: write_state_file(f"idforge-high-water-ms v1\n{hour_ahead}\n"))
    for query in ("SELECT idforge_snowflake()", "SELECT idforge_flake128()"):
        with pytest.raises(SqlError) as e:
            sql(query)
        assert (e.value.sqlstate, e.value.message[:13]) == ("55000", "CLOCK_BEHIND:"), e.value
    # 1.5 s behind: within the lead, the ids come at once, after the last run's.
    near = int(time.time() * 1000) + 1_500
    while_stopped(lambda: write_state_file(f"idforge-high-water-ms v1\n{near}\n"))
    sid = int(one("SELECT idforge_snowflake()"))
    assert int(one(f"SELECT {ms_of('time')} FROM idforge_decode({sid})")) > near - 1_000
    assert int(one("SELECT idforge_flake128()").replace("-", "")[:16], 16) > near - 1_000


def test_a_crashed_backend_resets_shared_memory_and_rereads_the_state_file():
    last = int(one("SELECT idforge_snowflake()"))
    # A mark 3.5 s ahead, then a backend killed: the postmaster restarts every backend and
    # builds the shared generators again from the file, so the ids go on 2.5 s ahead of the
    # time it was written (the running generators, kept, would be at the clock).
    written = int(time.time() * 1000)
    write_state_file(f"idforge-high-water-ms v1\n{written + 3_500}\n")
    victim = start_psql("SELECT pg_sleep(30)")
    deadline = time.monotonic() + 10
    while not (found := sql("SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'")):
        assert time.monotonic() < deadline, "the sleeping session never showed up"
        time.sleep(0.1)
    os.kill(int(found[0][0]), 9)
    victim.communicate(timeout=60)
    time.sleep(1)
    wait_ready()
    first = int(one("SELECT idforge_snowflake()"))
    assert first > last
    assert int(one(f"SELECT {ms_of('time')} FROM idforge_decode({first})")) > written + 2_400


def test_sessions_racing_for_a_new_layout_share_one_generator():
    layout = "epoch=1600000000000,tick=1,time=41,node=10,seq=12"
    sessions = [
        start_psql(f"COPY (SELECT idforge_snowflake('{layout}') FROM generate_series(1, 20000)) TO STDOUT")
        for _ in range(8)
    ]
    ids = [int(x) for p in sessions for x in finish(p)]
    assert len(ids) == len(set(ids)) == 160_000
    # The same encoding written another way (`unsigned` only widens validation, a preset spelled
    # out) is the same generator: drawn side by side in one statement, two generators would
    # make the same ids within a millisecond.
    spelled = "epoch=1288834974657,tick=1,time=41,node=10,seq=12"
    for a, b in ((layout, layout + ",unsigned"), ("twitter", spelled)):
        rows = sql(f"SELECT idforge_snowflake('{a}'), idforge_snowflake('{b}') "
                   "FROM generate_series(1, 5000)")
        both = [int(x) for row in rows for x in row]
        assert len(both) == len(set(both)) == 10_000, (a, b)


def test_a_damaged_state_file_stops_the_ids_that_need_it():
    # The worst size too: a state file of 1 MB is not read whole; it is damaged all the same.
    while_stopped(lambda: write_state_file("idforge-high-water-ms v1\n1\n" + " " * 1_000_000))
    with pytest.raises(SqlError) as e:
        sql("SELECT idforge_snowflake()")
    assert (e.value.sqlstate, e.value.message[:3]) == ("58030", "IO:"), e.value
    while_stopped(lambda: write_state_file("hello\n"))
    for query in ("SELECT idforge_snowflake()", "SELECT idforge_flake128()"):
        with pytest.raises(SqlError) as e:
            sql(query)
        assert (e.value.sqlstate, e.value.message[:3]) == ("58030", "IO:"), e.value
        assert "idforge.state" in e.value.message
    # ObjectIds do not rely on it; decoding does not either.
    assert len(one("SELECT idforge_objectid()")) == 24
    assert one("SELECT node FROM idforge_decode(1877000000000000000)") == "648"
    while_stopped(lambda: os.remove(STATE_FILE))
    assert int(one("SELECT idforge_snowflake()")) > 0


def test_without_shared_preload_libraries_the_calls_say_so():
    restart(opts=ENV["opts"].replace("shared_preload_libraries=idforge", "shared_preload_libraries=''"))
    try:
        with pytest.raises(SqlError) as e:
            sql("SELECT idforge_snowflake()")
        assert e.value.sqlstate == "55000", e.value
        assert e.value.message.startswith("INVALID_ARGUMENT:"), e.value
        assert "shared_preload_libraries" in e.value.message
        # Decoding needs no shared memory.
        assert one("SELECT node FROM idforge_decode(1877000000000000000)") == "648"
    finally:
        restart()


def test_a_standby_makes_no_snowflake_ids():
    # A standby (here: the same data directory started in standby mode) has its primary's
    # settings, idforge.node_id too: its snowflake ids would be the primary's.
    signal = os.path.join(ENV["data"], "standby.signal")
    while_stopped(lambda: open(signal, "w").close())
    try:
        assert one("SELECT pg_is_in_recovery()") == "t"
        with pytest.raises(SqlError) as e:
            sql("SELECT idforge_snowflake()")
        assert e.value.sqlstate == "55000" and "standby" in e.value.message, e.value
        # ObjectIds and flake-128 ids carry random bytes of this server's own.
        assert len(one("SELECT idforge_objectid()")) == 24
        assert len(one("SELECT idforge_flake128()")) == 36
    finally:
        while_stopped(lambda: os.remove(signal))
    assert int(one("SELECT idforge_snowflake()")) > 0


def snowflake_ahead_ms() -> int:
    """How far ahead of the clock a fresh snowflake id's time is."""
    before = int(time.time() * 1000)
    sid = int(one("SELECT idforge_snowflake()"))
    return int(one(f"SELECT {ms_of('time')} FROM idforge_decode({sid})")) - before


def promote_a_copy(prepare=lambda: None) -> None:
    """This data directory started as a standby (as a copy of this primary would be), then
    promoted: a new timeline, its primary's node id and files."""
    signal = os.path.join(ENV["data"], "standby.signal")

    def to_standby():
        prepare()
        open(signal, "w").close()

    while_stopped(to_standby)
    assert one("SELECT pg_promote()") == "t"


def test_a_promoted_standby_moves_past_the_old_primarys_ids():
    # A restart of the same server on the same timeline: no takeover, ids near the clock.
    restart()
    assert snowflake_ahead_ms() < 2_500
    # Promoted with its old primary's node id: the ids move past what the old primary could
    # have made (its 3 s lead and 1 s of clock difference), after a short wait.
    promote_a_copy()
    assert snowflake_ahead_ms() > 3_000
    # A standby copied before its primary made any id (no node file): the same.
    restart()
    promote_a_copy(prepare=lambda: os.remove(os.path.join(ENV["data"], "idforge.node")))
    assert snowflake_ahead_ms() > 3_000
    # The node file records the node id, timeline and writer making ids here.
    node_file = os.path.join(ENV["data"], "idforge.node")
    with open(node_file) as f:
        record = f.read().split("\n")
    assert record[:3] == ["idforge-node v1", f"node={NODE}", "timeline=3"], record
    assert record[3].startswith("writer=") and record[3].endswith(os.path.realpath(ENV["data"]))
    # A node id of its own, after a promotion: nothing to move past (another node's ids cannot
    # meet its own), and the file records it.
    promote_a_copy()
    restart(opts=ENV["opts"].replace(f"idforge.node_id={NODE}", "idforge.node_id=8"))
    assert one("SELECT node FROM idforge_decode(idforge_snowflake())") == "8"
    with open(node_file) as f:
        assert f.read().split("\n")[1:3] == ["node=8", "timeline=4"]
    restart()
    assert one("SELECT node FROM idforge_decode(idforge_snowflake())") == str(NODE)


def test_a_bounded_number_of_layouts():
    # Layouts other than the presets take one of 10 slots on first use, then a clear error; a
    # restart empties them. Layouts the extension would not serve take none.
    restart()
    for bad, code in [
        ("epoch=4102444800000,tick=1,time=41,node=10,seq=12", "EPOCH_IN_FUTURE:"),
        ("epoch=0,tick=1000000000000,time=2,node=10,seq=1", "INVALID_LAYOUT: the extension serves"),
        ("epoch=0,tick=3001,time=30,node=10,seq=12", "INVALID_LAYOUT: the extension serves ticks of at most 3000 ms"),
    ]:
        with pytest.raises(SqlError) as e:
            sql(f"SELECT idforge_snowflake('{bad}')")
        assert e.value.message.startswith(code), (bad, e.value)
    made = 0
    with pytest.raises(SqlError) as e:
        for k in range(20):
            sql(f"SELECT idforge_snowflake('epoch={1577836800000 + k},tick=1,time=41,node=10,seq=12')")
            made += 1
    assert e.value.sqlstate == "53000" and "10 until" in e.value.message, e.value
    assert made == 10
    # Layouts already made still work, and so does every preset: they have slots of their own.
    assert int(one("SELECT idforge_snowflake('epoch=1577836800000,tick=1,time=41,node=10,seq=12')")) > 0
    for preset in ("twitter", "discord", "instagram", "sonyflake", "baidu", "js_safe"):
        if preset == "baidu":
            # Its 28-bit seconds ran out in 2024 (the preset decodes old ids).
            with pytest.raises(SqlError) as e:
                sql("SELECT idforge_snowflake('baidu')")
            assert e.value.message.startswith("TIME_OUT_OF_RANGE:"), e.value
            continue
        assert int(one(f"SELECT idforge_snowflake('{preset}')")) != 0
    restart()
    assert int(one("SELECT idforge_snowflake('twitter')")) > 0
