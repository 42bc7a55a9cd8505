#!/usr/bin/env python3
"""A step's output, copied and timed, for ci/test.sh's summary.

    steplog.py tee LOG      copies standard input to standard output and to LOG, and writes
                            LOG.times: per line, the seconds it waited for since the line
                            before (or the step's start), tab, the line
    steplog.py slowest LOG [N]
                            the N (5) lines that came after the longest waits: the ends of the
                            step's slowest tests or phases (a test binary's result line, a
                            build's "Finished", a harness's own line), one a line, "  Ns  LINE"

Lines are read as bytes and written unchanged, flushed one by one, so a step's output reaches
the CI page as it comes.
"""
import sys
import time


def tee(log: str) -> None:
    last = time.monotonic()
    with open(log, "wb") as out, open(log + ".times", "w", encoding="utf-8") as times:
        for line in sys.stdin.buffer:
            now = time.monotonic()
            try:
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()
            except BrokenPipeError:
                pass
            out.write(line)
            out.flush()
            text = line.decode("utf-8", "replace").rstrip("\n")[:160]
            times.write(f"{now - last:.1f}\t{text}\n")
            times.flush()
            last = now
        # The wait from the last line to the end of the output (the step's last command).
        times.write(f"{time.monotonic() - last:.1f}\t(the step's end)\n")


def slowest(log: str, n: int) -> None:
    rows = []
    try:
        with open(log + ".times", encoding="utf-8") as times:
            for row in times:
                wait, _, text = row.rstrip("\n").partition("\t")
                rows.append((float(wait), text.strip()))
    except (OSError, ValueError):
        return
    for wait, text in sorted(rows, key=lambda r: -r[0])[:n]:
        print(f"  {wait:6.0f}s  {text}")


def main() -> int:
    if len(sys.argv) >= 3 and sys.argv[1] == "tee":
        tee(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "slowest":
        slowest(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 5)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
