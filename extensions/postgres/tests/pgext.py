"""Helpers of the extension's tests: psql against the throwaway cluster of ci/steps/pg-extension.sh."""

import datetime
import os
import subprocess
import time

ENV = {
    "bin": os.environ.get("IDFORGE_PGEXT_BIN", ""),
    "data": os.environ.get("IDFORGE_PGEXT_DATA", ""),
    "port": os.environ.get("IDFORGE_PGEXT_PORT", ""),
    "socket": os.environ.get("IDFORGE_PGEXT_SOCKET", ""),
    "opts": os.environ.get("IDFORGE_PGEXT_OPTS", ""),
}
NODE = int(os.environ.get("IDFORGE_PGEXT_NODE", "7"))
STATE_FILE = os.path.join(ENV["data"], "idforge.state")


class SqlError(Exception):
    """psql failed: `sqlstate` and `message` of the server's error."""

    def __init__(self, sqlstate: str, message: str):
        super().__init__(f"{sqlstate}: {message}")
        self.sqlstate = sqlstate
        self.message = message


def psql_args(*extra: str) -> list:
    return [
        os.path.join(ENV["bin"], "psql"),
        "-X", "-A", "-t", "-q",
        "-v", "ON_ERROR_STOP=1",
        "-v", "VERBOSITY=verbose",
        "-h", ENV["socket"], "-p", ENV["port"], "-U", "postgres", "-d", "postgres",
        *extra,
    ]


def sql(query: str) -> list:
    """Runs `query`; returns its rows, each a list of column texts ('|'-separated by psql)."""
    proc = subprocess.run(psql_args("-c", query), capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise parse_error(proc.stderr)
    return [line.split("|") for line in proc.stdout.splitlines() if line != ""]


def one(query: str) -> str:
    rows = sql(query)
    assert len(rows) == 1 and len(rows[0]) == 1, rows
    return rows[0][0]


def parse_error(stderr: str) -> SqlError:
    # VERBOSITY=verbose: "ERROR:  22023: INVALID_LAYOUT: ...", then a LOCATION line.
    for line in stderr.splitlines():
        if line.startswith("ERROR:"):
            rest = line[len("ERROR:"):].strip()
            state, _, message = rest.partition(": ")
            return SqlError(state, message)
    return SqlError("", stderr)


def start_psql(query: str) -> subprocess.Popen:
    """One session running `query` in the background (read its stdout with `finish`)."""
    return subprocess.Popen(
        psql_args("-c", query), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(proc: subprocess.Popen) -> list:
    out, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise parse_error(err)
    return [line for line in out.splitlines() if line != ""]


def as_pg(args: list) -> list:
    return (["runuser", "-u", "postgres", "--"] + args) if os.geteuid() == 0 else args


def pg_ctl(*args: str, opts: str = None) -> None:
    cmd = [os.path.join(ENV["bin"], "pg_ctl"), "-D", ENV["data"], "-w", "-t", "60", *args]
    if args[0] in ("start", "restart"):
        log = os.path.join(ENV["socket"], "log")
        cmd += ["-l", log, "-o", ENV["opts"] if opts is None else opts]
    subprocess.run(as_pg(cmd), check=True, stdout=subprocess.DEVNULL, timeout=120)


def restart(opts: str = None, mode: str = "fast") -> None:
    """Stops the server (`mode`: fast or immediate, which is a crash) and starts it again."""
    pg_ctl("stop", "-m", mode)
    pg_ctl("start", opts=opts)
    wait_ready()


def while_stopped(change) -> None:
    """Stops the server, runs `change()` (on its files), and starts it again."""
    pg_ctl("stop", "-m", "fast")
    change()
    pg_ctl("start")
    wait_ready()


def wait_ready() -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            sql("SELECT 1")
            return
        except SqlError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def read_state_file() -> int:
    with open(STATE_FILE) as f:
        header, mark = f.read().split("\n")[:2]
    assert header == "idforge-high-water-ms v1", header
    return int(mark)


def write_state_file(text: str) -> None:
    # Rewrites in place, so the file keeps its owner (the server's user).
    with open(STATE_FILE, "w") as f:
        f.write(text)


def spec(layout) -> str:
    """A layout of the shared vectors as the text the SQL functions take."""
    if isinstance(layout, str):
        return layout
    text = "epoch={},tick={},time={},node={},seq={}".format(
        layout["epoch_ms"], layout["tick_ms"], layout["time_bits"], layout["node_bits"],
        layout["seq_bits"],
    )
    if layout["order"] != "time_node_seq":
        text += ",order=" + layout["order"]
    if layout["unsigned"]:
        text += ",unsigned"
    return text


def signed(value: int) -> int:
    """A u64 as PostgreSQL's bigint holds its bits."""
    return value - (1 << 64) if value >= 1 << 63 else value


# The last Unix ms Python's datetime can write (9999-12-31).
MAX_TEXT_MS = 253_402_300_799_999


def ts_of_ms(ms: int) -> str:
    """A timestamptz literal of Unix milliseconds, exact (interval arithmetic goes through a
    double and rounds past 2^53 microseconds)."""
    assert 0 <= ms <= MAX_TEXT_MS, ms
    t = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
        milliseconds=ms
    )
    return "'" + t.strftime("%Y-%m-%d %H:%M:%S.%f") + "+00'::timestamptz"


def sessions_of_ids(expr: str, sessions: int, count: int, convert=str) -> list:
    """`sessions` sessions at once, each making `count` values of `expr` (converted by
    `convert`); checks that all are distinct and that each session's strictly increase, and
    returns each session's values."""
    procs = [
        start_psql(f"COPY (SELECT {expr} FROM generate_series(1, {count})) TO STDOUT")
        for _ in range(sessions)
    ]
    per_session = [[convert(x) for x in finish(p)] for p in procs]
    everything = {i for ids in per_session for i in ids}
    assert sum(map(len, per_session)) == sessions * count
    assert len(everything) == sessions * count, "duplicate ids"
    for ids in per_session:
        assert all(a < b for a, b in zip(ids, ids[1:])), "a session's ids went down"
    return per_session
