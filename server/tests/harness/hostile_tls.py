"""The hostile.py cases against the TLS port: clients that stop inside a record, one and 10,000 of
them, each on a server of its own with TLS on (server/tests/harness/hostile.py runs them)."""

import os
import subprocess
import threading
import time

from cluster import resp
from hostile_kit import (
    REQUEST_TIMEOUT_MS,
    RSS_LIMIT_MB,
    RssSampler,
    check,
    close_all,
    connect,
    percentile,
    read_line,
    side_server,
    stop_side_server,
    wait_closed,
)


def tls_handshake(port, context):
    """A TLS handshake driven over a plain socket (so the raw socket stays ours afterwards);
    returns (socket, ssl object)."""
    import ssl

    s = connect(port)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            pending = outgoing.read()
            if pending:
                s.sendall(pending)
            chunk = s.recv(65536)
            if not chunk:
                raise OSError("closed during the TLS handshake")
            incoming.write(chunk)
    pending = outgoing.read()  # the client's Finished
    if pending:
        s.sendall(pending)
    return s, tls, outgoing


def tls_incr_probe(port, context, stop, took):
    """INCR over TLS, one at a time, until `stop` is set; appends each latency (ms) to `took`
    (None for a failure)."""
    try:
        s = context.wrap_socket(connect(port), server_hostname="localhost")
        while not stop.is_set():
            start = time.monotonic()
            s.sendall(resp("INCR", "latency"))
            line = read_line(s)
            took.append((time.monotonic() - start) * 1000 if line.startswith(b":") else None)
            time.sleep(0.002)
        s.close()
    except OSError:
        took.append(None)


def make_cert(ctx):
    """A self-signed certificate for localhost and 127.0.0.1: (cert, key) paths."""
    cert, key = os.path.join(ctx.tmp, "tls.pem"), os.path.join(ctx.tmp, "tls.key")
    if os.path.exists(cert):
        return cert, key
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    check(made.returncode == 0, f"openssl could not make a test certificate: {made.stderr!r}")
    return cert, key


def case_tls_partial_record(ctx):
    """TLS: 500 clients finish the handshake, then send 12 KB of a 16 KB TLS record and stop.
    Each is closed once request-timeout-ms has passed (a record must be complete within it).
    Runs on a second server, with TLS on; its own RSS and INCR-over-TLS p99 are in the note."""
    import ssl

    cert, key = make_cert(ctx)
    proc, port = side_server(ctx, "tls", ["--tls-cert", cert, "--tls-key", key])
    stop, took, socks = threading.Event(), [], []
    sampler = RssSampler(proc.pid)
    try:
        context = ssl.create_default_context(cafile=cert)
        probe = threading.Thread(target=tls_incr_probe, args=(port, context, stop, took))
        probe.start()
        for _ in range(500):
            s, tls, outgoing = tls_handshake(port, context)
            tls.write(b"x" * 16000)
            record = outgoing.read()
            s.sendall(record[:12000])
            socks.append(s)
        sent = time.monotonic()
        closed = wait_closed(socks, REQUEST_TIMEOUT_MS / 1000 + 6)
        after = time.monotonic() - sent
        stop.set()
        probe.join()
        peak = sampler.stop()
        check(proc.poll() is None, "the TLS server died")
    finally:
        stop.set()
        sampler.running = False
        close_all(socks)
        stop_side_server(proc)
    ok = [t for t in took if t is not None]
    check(closed == 500, f"clients holding half a TLS record are closed ({closed}/500)")
    check(ok and len(ok) == len(took), f"the TLS INCR client was served ({len(ok)} ok of {len(took)})")
    check(peak < RSS_LIMIT_MB, f"TLS server peak RSS {peak:.0f} MB")
    return (f"500 x 12 KB of a TLS record: all closed {after:.1f} s after; TLS server peak "
            f"{peak:.0f} MB, TLS INCR p99 {percentile(ok, 0.99):.2f} ms ({len(ok)} INCRs)")


TLS_PARTIAL = 10_000


TLS_PARTIAL_TIMEOUT_MS = 300_000


def case_tls_partial_records_many(ctx):
    """TLS: 10,000 clients finish the handshake, send 12 KB of a 16 KB TLS record each and stop,
    all held at once (a request timeout longer than the case): the incomplete records stay
    within --tls-max-incomplete-bytes (64 MB; reads past it close their connection), so the
    server stays under the RSS bound."""
    import ssl

    cert, key = make_cert(ctx)
    proc, port = side_server(ctx, "tls-many", [
        "--tls-cert", cert, "--tls-key", key, "--maxclients", str(TLS_PARTIAL + 100)],
        request_timeout_ms=TLS_PARTIAL_TIMEOUT_MS)
    socks = []
    sampler = RssSampler(proc.pid)
    try:
        context = ssl.create_default_context(cafile=cert)
        started = time.monotonic()
        for _ in range(TLS_PARTIAL):
            s, tls, outgoing = tls_handshake(port, context)
            tls.write(b"x" * 16000)
            s.sendall(outgoing.read()[:12000])
            socks.append(s)
        took = time.monotonic() - started
        closed = wait_closed(socks, 2)
        peak = sampler.stop()
        check(proc.poll() is None, "the TLS server died")
        alive = tls_pong(port, context)
    finally:
        sampler.running = False
        close_all(socks)
        stop_side_server(proc)
    check(peak < RSS_LIMIT_MB, f"TLS server peak RSS {peak:.0f} MB with {TLS_PARTIAL} incomplete records")
    check(closed > 0, "no connection was closed for the incomplete-record budget")
    check(alive, "a new TLS client was served")
    return (f"{TLS_PARTIAL:,} x 12 KB of a TLS record held at once ({took:.0f} s): peak {peak:.0f} MB, "
            f"{closed:,} closed for the budget, the rest kept until the request timeout")


def tls_pong(port, context):
    """Whether a new TLS client gets PONG."""
    with context.wrap_socket(connect(port), server_hostname="localhost") as s:
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
        return s.recv(64).startswith(b"+PONG")
