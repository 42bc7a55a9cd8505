"""The one report writer of the benchmarks (bench/): each bench script hands its raw results to
it, and it writes the ratios, the targets (this run's verdicts beside the previous run's: see
record.py) and the bench's section of BENCHMARKS.md.

    python3 bench/report SUITE ARGS...      (SUITE --help: its arguments)

Run as a folder, so its modules import each other by name.
"""

import importlib
import sys

# suite -> (module, what it reports, the script that runs it)
SUITES = {
    "rust": ("rust", "criterion, saturation and the C API: cost per id beside peers and floors", "bench/bench.sh"),
    "python": ("python_ids", "the Python binding's ids beside their peers (pyperf)", "bench/python/run.sh"),
    "python-uuid7": ("python_uuid7", "Python's uuid7() and ulid() (pyperf, then a plain loop)", "bench/python/run.sh uuid7"),
    "node": ("node", "the Node binding (mitata, then a plain loop)", "bench/node/run.sh [uuid7]"),
    "go": ("go", "the Go binding (go test -bench)", "bench/go/run.sh"),
    "server": ("server", "the segment server beside redis-server (redis-benchmark)", "bench/server.sh"),
    "http": ("http_api", "the HTTP API beside RESP (wrk, redis-benchmark)", "bench/http.sh"),
    "section": (None, "MARKER HEADING FILE: FILE's text as a section (bench/common.sh)", "the other bench/*.sh"),
    "self-test": (None, "the pass/fail rule on made-up runs, and every suite's module imported", "ci/steps/node.sh"),
    "git-state": (None, "the commit measured (with \"with changes\" for a dirty tree)", "bench/bench.sh"),
}


def usage(out):
    print(__doc__.strip(), file=out)
    print("\nsuites:", file=out)
    for name, (_, what, by) in SUITES.items():
        print(f"  {name:<13} {what} ({by})", file=out)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        usage(sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    suite, rest = argv[0], argv[1:]
    if suite not in SUITES:
        print(f"error: unknown suite {suite!r}\n", file=sys.stderr)
        usage(sys.stderr)
        return 2
    import record

    if suite == "section":
        if len(rest) not in (3, 5) or (len(rest) == 5 and rest[3] != "--markdown"):
            print("usage: bench/report section MARKER HEADING FILE [--markdown BENCHMARKS.md]", file=sys.stderr)
            return 2
        marker, heading, path = rest[:3]
        with open(path) as f:
            record.write_marked(rest[4] if len(rest) == 5 else "BENCHMARKS.md", marker, heading, f.read())
        return 0
    if suite == "self-test":
        record.self_test()
        for module, _, _ in SUITES.values():
            if module:
                importlib.import_module(module)
        return 0
    if suite == "git-state":
        print(importlib.import_module("rust").git_state())
        return 0
    sys.argv[0] = f"report {suite}"  # argparse's prog, in the suites' usage lines
    return importlib.import_module(SUITES[suite][0]).main(rest) or 0


sys.exit(main(sys.argv[1:]))
