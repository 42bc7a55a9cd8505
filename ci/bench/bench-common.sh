# Sourced by the bench scripts: a work dir and the PIDs of what they start, both cleaned up at
# exit (servers stopped by PID), and loopback port helpers.
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do redis-cli -p "$1" PING >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }

# write_section MARKER TITLE REPORT: puts REPORT's text in BENCHMARKS.md between
# <!-- MARKER:begin --> and <!-- MARKER:end -->, or in a new "## TITLE" section at the end.
write_section() {
  python3 - "$1" "$2" "$3" <<'PY'
import pathlib, sys
marker, title, report = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]).read_text().strip()
path = pathlib.Path("BENCHMARKS.md")
text = path.read_text()
begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
block = f"{begin}\n{report}\n{end}"
if begin in text:
    head, rest = text.split(begin, 1)
    text = head + block + rest.split(end, 1)[1]
else:
    text = text.rstrip() + f"\n\n## {title}\n\n" + block + "\n"
path.write_text(text)
PY
}
