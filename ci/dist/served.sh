# shellcheck shell=bash
# Sourced by ci/dist/dist-test.sh and ci/dist/static-server-test.sh: their scratch folder, waiting
# for a served idforge's port, its clean stop, and the INCR check across a restart.

# scratch_and_server_cleanup: $work, a new scratch folder, and $server_pid (the served idforge, if
# any), both cleaned up at exit: the folder removed, the server killed.
scratch_and_server_cleanup() {
  work="$(mktemp -d)"
  server_pid=""
  trap '[ -z "$server_pid" ] || kill -KILL "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
}

# wait_port PID FILE LOG: until FILE (serve --port-file) holds the port; fails when PID ends first
# (its LOG shown) or after 60 s.
wait_port() {
  local _
  for _ in $(seq 600); do
    [ -s "$2" ] && return 0
    kill -0 "$1" 2>/dev/null || { cat "$3" >&2; return 1; }
    sleep 0.1
  done
  echo "error: idforge serve wrote no port to $2 in 60 s" >&2
  return 1
}

# stop_served PID LOG: SIGTERM, then PID must exit 0 within 30 s (a child of this shell).
stop_served() {
  local rc=0 _
  kill -TERM "$1"
  for _ in $(seq 300); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$1" 2>/dev/null; then
    echo "error: idforge serve ignored SIGTERM for 30 s" >&2
    return 1
  fi
  wait "$1" || rc=$?
  [ "$rc" -eq 0 ] || { echo "error: idforge serve exited $rc on SIGTERM" >&2; cat "$2" >&2; return 1; }
}

# incr_across_restart START STOP CLI...: START serves (setting $port), CLI (redis-cli, or a wrapper
# that runs it) INCR orders answers 1 then 2; after STOP and START again, 3 (a clean stop gave its
# cached range back: no gap); then STOP.
# shellcheck disable=SC2154 # $port: set by START
incr_across_restart() {
  local start="$1" stop="$2"
  shift 2
  "$start"
  [ "$("$@" -p "$port" INCR orders)" = 1 ] || { echo "error: the first INCR did not answer 1" >&2; return 1; }
  [ "$("$@" -p "$port" INCR orders)" = 2 ] || { echo "error: the second INCR did not answer 2" >&2; return 1; }
  "$stop"
  "$start"
  [ "$("$@" -p "$port" INCR orders)" = 3 ] || { echo "error: INCR after a restart did not answer 3" >&2; return 1; }
  "$stop"
}
