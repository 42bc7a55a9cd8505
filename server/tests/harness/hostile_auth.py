"""The hostile.py cases against AUTH: floods of wrong passwords (from one address and from many),
the user-name oracle, the per-address allowance, the AUTH timeout, and a real user's AUTH during
a flood (server/tests/harness/hostile.py runs them)."""

import threading
import time

from cluster import resp
from hostile_kit import (
    AUTH_TIMEOUT_MS,
    PASSWORD,
    USER,
    check,
    close_all,
    closed_within,
    connect,
    percentile,
    read_line,
)


def case_create_user(ctx):
    s = connect(ctx.port)
    s.sendall(resp("IDF.USER", "SET", USER, PASSWORD, "admin"))
    line = read_line(s)
    s.close()
    check(line == b"+OK\r\n", f"IDF.USER SET: {line!r}")
    return "argon2 user created: auth required from now on"


def case_auth_flood(ctx):
    """128 concurrent wrong AUTHs, from 128 addresses (so the per-address limit does not help)."""
    socks = [connect(ctx.port, source=f"127.0.1.{i + 1}", timeout=120) for i in range(128)]
    for s in socks:
        s.sendall(resp("AUTH", USER, "wrong"))
    replies = [read_line(s) for s in socks]
    close_all(socks)
    wrong = sum(r.startswith(b"-WRONGPASS") for r in replies)
    check(wrong == 128, f"128 wrong AUTHs refused ({wrong})")
    return "128 concurrent wrong AUTHs: all WRONGPASS"


def timed_auth(ctx, source, user):
    s = connect(ctx.port, source=source, timeout=60)
    start = time.monotonic()
    s.sendall(resp("AUTH", user, "wrong"))
    line = read_line(s)
    took = time.monotonic() - start
    s.close()
    check(line.startswith(b"-WRONGPASS"), f"AUTH {user}: {line!r}")
    return took


def case_user_oracle(ctx):
    known, unknown = [], []
    for i in range(4):
        known.append(timed_auth(ctx, f"127.0.2.{i + 1}", USER))
        unknown.append(timed_auth(ctx, f"127.0.3.{i + 1}", "nobody"))
    k, u = sorted(known)[1], sorted(unknown)[1]
    check(0.5 < u / k < 2, f"unknown and known users take about the same time ({u:.3f} vs {k:.3f})")
    return f"AUTH known {k * 1000:.0f} ms, unknown {u * 1000:.0f} ms (lower medians)"


def case_failed_auth_limit(ctx):
    """15 concurrent wrong AUTHs from one address: its allowance (10) passes, the rest are refused
    at once, without a password check."""
    socks = [connect(ctx.port, source="127.0.4.1", timeout=60) for _ in range(15)]
    for s in socks:
        s.sendall(resp("AUTH", USER, "wrong"))
    replies = [read_line(s) for s in socks]
    close_all(socks)
    wrong = sum(r.startswith(b"-WRONGPASS") for r in replies)
    throttled = sum(r.startswith(b"-ERR too many failed AUTH") for r in replies)
    check(wrong + throttled == 15 and 10 <= wrong <= 11, f"{wrong} WRONGPASS, {throttled} refused")
    return f"15 wrong AUTHs from one address: {wrong} checked, {throttled} refused (too many failed)"


def case_auth_timeout(ctx):
    socks = [connect(ctx.port) for _ in range(20)]
    opened = time.monotonic()
    took = [closed_within(s, AUTH_TIMEOUT_MS / 1000 + 3) for s in socks]
    close_all(socks)
    check(all(t is not None for t in took), "connections that never authenticate are closed")
    return f"20 unauthenticated: all closed {time.monotonic() - opened:.1f} s after connecting"


def auth_attack(port, sources, per_source, stop, counts):
    """Wrong-password AUTHs for alice from every address of `sources`, `per_source` connections
    each, each sending the next as soon as the last is answered; reconnects when closed."""
    import selectors

    sel = selectors.DefaultSelector()
    req = resp("AUTH", USER, "not the password")

    def open_one(src):
        try:
            s = connect(port, source=src, timeout=5)
            s.sendall(req)
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, src)
        except OSError:
            counts["connect errors"] = counts.get("connect errors", 0) + 1

    for src in sources:
        for _ in range(per_source):
            open_one(src)
    while not stop.is_set():
        for key, _ in sel.select(timeout=0.1):
            s, src = key.fileobj, key.data
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(s)
                s.close()
                open_one(src)
                continue
            for line in data.split(b"\r\n")[:-1]:
                kind = "throttled" if b"too many" in line else line.split(b" ")[0].decode()
                counts[kind] = counts.get(kind, 0) + 1
                try:
                    s.sendall(req)
                except OSError:
                    pass
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    sel.close()


def case_auth_flood_real_user(ctx):
    """600 connections from 200 addresses send wrong passwords for alice without pause; alice
    (who authenticated before) and carol (a new user, first AUTH) authenticate from another
    address meanwhile: every AUTH answered within 500 ms."""
    admin = ctx.admin()
    admin.sendall(resp("IDF.USER", "SET", "carol", "carol pw", "read:*"))
    check(read_line(admin) == b"+OK\r\n", "IDF.USER SET carol")
    admin.close()
    stop, counts = threading.Event(), {}
    sources = [f"127.0.5.{i + 1}" for i in range(200)]
    attacker = threading.Thread(target=auth_attack, args=(ctx.port, sources, 3, stop, counts))
    attacker.start()
    took = {"alice": [], "carol": []}
    try:
        time.sleep(2)  # the flood fills the queue of checks
        for i in range(24):
            user, pw = (USER, PASSWORD) if i % 3 else ("carol", "carol pw")
            s = connect(ctx.port, timeout=30)
            start = time.monotonic()
            s.sendall(resp("AUTH", user, pw))
            line = read_line(s)
            took[user].append((time.monotonic() - start) * 1000)
            s.close()
            check(line == b"+OK\r\n", f"AUTH {user} during the flood: {line!r}")
            time.sleep(0.15)
    finally:
        stop.set()
        attacker.join()
    everyone = took["alice"] + took["carol"]
    worst = max(everyone)
    checked = counts.get("-WRONGPASS", 0)
    check(checked > 0, f"the flood was answered ({counts})")
    check(worst < 500, f"every real AUTH within 500 ms (alice {sorted(took['alice'])[-3:]}, "
          f"carol {sorted(took['carol'])[-3:]} ms)")
    return (f"600 wrong-AUTH connections from 200 addresses ({checked} checked, "
            f"{counts.get('throttled', 0)} throttled): alice p99 {percentile(took['alice'], 0.99):.0f} ms, "
            f"carol (first AUTH) max {max(took['carol']):.0f} ms")
