#!/usr/bin/env python3
"""Prints how much slower than an idle machine this one runs now: the wall time over the CPU
time of a short busy loop (0.2 s of CPU), at least 1, with two decimals. ci/test.sh exports it
before each step as IDFORGE_TEST_SLOWDOWN, and the few time bounds the tests keep scale with it
(testkit's `scaled`): 2 means another process takes half of this core.
"""
import time


def main() -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    spins = 0
    while time.process_time() - cpu < 0.2:
        spins += 1
    ratio = (time.perf_counter() - wall) / max(time.process_time() - cpu, 1e-6)
    print(f"{max(1.0, ratio):.2f}")


if __name__ == "__main__":
    main()
