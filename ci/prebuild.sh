# The build scheduling of a CI run: the dist step's builds in the background, so that they use the
# CPU the other steps leave idle. Sourced by ci/test.sh (start_dist_prebuild; it needs `at_exit`,
# the array ci/test.sh runs at exit) and by ci/steps/dist.sh (wait_dist_prebuild, dist_deps), with
# ci/lib.sh (ci_minutes_left; without_prebuild CMD... pauses the builds). The session's id is
# IDFORGE_PREBUILD_PID, exported to the steps.

# The dist step's builds (every architecture's, with the host's and Debian's toolchains) and the
# aarch64 root its tests run in, started in the background at nice 19 when the run begins: they
# take the CPU the other steps leave idle (harness waits, tests against services, single-threaded
# links) instead of adding their whole time at the end. Paused (SIGSTOP) around a check with a
# tight latency bound (without_prebuild). The dist step waits for them; its own ci/dist/dist.sh then finds
# every build done. Their log: $CARGO_TARGET_DIR/artifacts/prebuild.log.
dist_deps() {
  bash ci/install/install-deps.sh dist cross emulation pgext windows
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || bash ci/install/install-deps.sh node
}
start_dist_prebuild() {
  # Packages first, in the foreground: apt must not run in two places at once.
  dist_deps
  local log="$CARGO_TARGET_DIR/artifacts/prebuild"
  mkdir -p "$CARGO_TARGET_DIR/artifacts"
  rm -f "$log.rc" "$log.lanes"
  # A session of its own, so that one signal stops it all (cargo, rustc, mmdebstrap, qemu).
  # Lanes, each written to $log.lanes when built, so that the steps can go on without the later
  # ones when the run is out of time (wait_dist_prebuild). Two at once, in target folders of their
  # own (ci/dist/dist.sh's target_dir; cargo locks a folder per build): a fat-LTO link or a crate
  # of codegen-units 1 keeps one core busy, so one lane alone left the other core idle whenever
  # the foreground step did (the cross lane, last in a single queue, was deferred in every cold
  # run and in the warm ones too).
  #   first:  the host's (x86_64 glibc, which the other steps' docs and the x86_64 tests need),
  #           windows (the Windows artifacts: Debian's Rust, std built from source, mingw), macos
  #           (the macos step's clippy run, into the Windows folder: the host's build scripts
  #           and proc macros are shared);
  #   second: cross (the musl servers and every aarch64 artifact), with the aarch64 root beside
  #           it (made cold, it is mostly downloads and emulated package scripts, 5-13 minutes).
  # Its session is a scheduler autogroup of its own (Linux, sched_autogroup_enabled): nice works
  # only inside a group, and groups share the CPU evenly, so at nice 19 alone it took half the
  # CPU from the foreground steps (a cold run's clippy took 6.3 minutes instead of 3.1). The
  # group's own nice (/proc/self/autogroup, where the kernel has it) makes it yield.
  setsid bash -c '
    echo 19 >/proc/self/autogroup 2>/dev/null || true
    export IDFORGE_DIST_BUILD_ONLY=1 CARGO_TARGET_DIR="$1/artifacts"
    # A lane that fails is written as such: never deferred, so its step fails where it shows. The
    # lines of each lane are marked with its name ([host], [cross]).
    (
      rc=0
      if IDFORGE_DIST_ARCHES=x86_64 nice -n 19 bash ci/dist/dist.sh server c node jvm python pgext; then
        echo host >>"$2.lanes"
        IDFORGE_DIST_ARCHES=x86_64 nice -n 19 bash ci/dist/dist.sh windows node && echo windows >>"$2.lanes" ||
          { rc=1; echo "windows failed" >>"$2.lanes"; }
        nice -n 19 bash ci/dist/macos-check.sh && echo macos >>"$2.lanes" || { rc=1; echo "macos failed" >>"$2.lanes"; }
      else
        rc=1
        echo "host failed" >>"$2.lanes"
      fi
      exit "$rc"
    ) > >(sed -u "s/^/[host] /") 2>&1 &
    first=$!
    (
      rc=0
      nice -n 19 bash ci/dist/arm64-root.sh path &
      root=$!
      if IDFORGE_DIST_ARCHES=aarch64 nice -n 19 bash ci/dist/dist.sh server static c python node jvm pgext &&
        IDFORGE_DIST_ARCHES=x86_64 nice -n 19 bash ci/dist/dist.sh static; then
        echo cross >>"$2.lanes"
      else
        rc=1
        echo "cross failed" >>"$2.lanes"
      fi
      wait "$root" || rc=1
      exit "$rc"
    ) > >(sed -u "s/^/[cross] /") 2>&1 &
    second=$!
    rc=0
    wait "$first" || rc=1
    wait "$second" || rc=1
    echo "$rc" >"$2.rc"' prebuild "$CARGO_TARGET_DIR" "$log" >"$log.log" 2>&1 &
  export IDFORGE_PREBUILD_PID=$!
  at_exit+=('kill -TERM -- "-$IDFORGE_PREBUILD_PID" 2>/dev/null')
  echo "==> dist prebuild started in the background (nice 19; log $log.log)"
}
# stop_dist_prebuild: stops the prebuild's whole session (what cargo finished stays cached).
stop_dist_prebuild() {
  kill -TERM -- "-$IDFORGE_PREBUILD_PID" 2>/dev/null || true
  sleep 5
  kill -KILL -- "-$IDFORGE_PREBUILD_PID" 2>/dev/null || true
}
# wait_dist_prebuild: until the prebuild ends (its failures are the dist step's own to report:
# ci/dist/dist.sh builds again what it did not). Sets dist_deferred to the lanes not built when
# the run's time is short (ci_minutes_left, ci/test.sh) and the host's lane is built: they are
# stopped there, and the steps make and test what was built. A cold cache is what brings this
# about (the later lanes compile std and every dependency again for each target); what cargo
# finished stays in the cache, so the next run goes on from there.
wait_dist_prebuild() {
  local log="$CARGO_TARGET_DIR/artifacts/prebuild" start=$SECONDS lane left
  dist_deferred=""
  [ -n "${IDFORGE_PREBUILD_PID:-}" ] || return 0
  # A step killed inside without_prebuild would leave it stopped.
  kill -CONT -- "-$IDFORGE_PREBUILD_PID" 2>/dev/null || true
  while kill -0 "$IDFORGE_PREBUILD_PID" 2>/dev/null; do
    # The x86_64 dist tests, the registries, the image and the docs take about 15 minutes after
    # this, the windows step about 3 more: the windows lane may take until 15 minutes are left,
    # the later ones until 18 (when the windows lane is built).
    if grep -qx host "$log.lanes" 2>/dev/null; then
      left="$(ci_minutes_left)"
      if [ "$left" -lt 15 ] || { grep -qx windows "$log.lanes" && [ "$left" -lt 18 ]; }; then
        for lane in windows macos cross; do
          grep -qx -e "$lane" -e "$lane failed" "$log.lanes" || dist_deferred="$dist_deferred $lane"
        done
        dist_deferred="${dist_deferred# }"
      fi
    fi
    if [ -n "$dist_deferred" ]; then
      echo "    dist prebuild: the host's lane is built, not $dist_deferred, and $(ci_minutes_left) of the run's" \
        "$IDFORGE_CI_MINUTES minutes (IDFORGE_CI_MINUTES) are left: $dist_deferred deferred to the next run"
      stop_dist_prebuild
      break
    fi
    # Bounded: a mirror that hangs must not hold the run; dist.sh then builds what is missing.
    if [ $((SECONDS - start)) -ge 2400 ]; then
      echo "    dist prebuild: still running after 40 min of waiting; stopped"
      stop_dist_prebuild
      break
    fi
    sleep 2
  done
  echo "    dist prebuild: exit $(cat "$log.rc" 2>/dev/null || echo '?'), lanes built: $(tr '\n' ' ' <"$log.lanes" 2>/dev/null)waited $((SECONDS - start)) s"
  [ -n "$dist_deferred" ] || [ "$(cat "$log.rc" 2>/dev/null)" = 0 ] || tail -n 30 "$log.log"
}
