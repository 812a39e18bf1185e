#!/usr/bin/env bash
# Adversarial trials of ./test itself: stopped while the test build runs in the
# background and the adapters' conformance runs are under way (by a SIGTERM to the script
# alone, as `kill` or a CI runner sends it, or a SIGINT to its whole process group, as
# Ctrl-C in a terminal sends it), ./test exits and leaves no cargo, rustc, conformance run
# or redis-server of its own behind. (A SIGINT to the script alone is not a stop: bash
# lets a foreground command that outlives it have the last word, and ./test goes on.) Run from the repository root of a
# clone that has run ./test once (the adapters set up, the packages installed), with no
# other cargo or conformance run meanwhile; each trial forces lockstorm to be rebuilt.
#   tests/trials/test_script.sh [ROUNDS]
# Prints one line per trial and the totals; exit 1 if any failed.
set -u
rounds=${1:-1}
pass=0 fail=0
say() { if [ "$1" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi; echo "$1: $2"; }
root=$PWD
# What ./test starts, by command line: the background build (cargo and its rustc), and
# the conformance runs with their servers and workers.
left() {
  pgrep -f "(nextest run|cargo test) --features docker --no-run|rustc .*--crate-name lockstorm|adapters/python/conformance[.]py|redis-server" | wc -l
}
for round in $(seq "$rounds"); do
  for sig in TERM INT; do
    name="round $round SIG$sig"
    if [ "$(left)" -ne 0 ]; then
      say FAIL "$name: something was running before the trial"
      continue
    fi
    # A change to the library makes the background build compile it again, whole (as CI
    # builds it: incrementally, an unchanged library is rebuilt in seconds).
    touch "$root/src/lib.rs"
    log=$(mktemp)
    CARGO_INCREMENTAL=0 setsid ./test --no-install >"$log" 2>&1 &
    pid=$!
    # Stop it once the background build is under way and so is a conformance run (at most
    # 10 minutes: fmt and clippy come first).
    seen=0
    for _ in $(seq 600); do
      if pgrep -f "(nextest run|cargo test) --features docker --no-run" >/dev/null && pgrep -f "adapters/python/conformance[.]py" >/dev/null; then
        seen=1
        break
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    if [ "$seen" = 0 ]; then
      say FAIL "$name: the build and the conformance runs were never seen running at once (log: $log)"
      kill -- -"$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      continue
    fi
    case $sig in
      INT) kill -s INT -- -"$pid" ;;
      *) kill -s "$sig" "$pid" ;;
    esac
    wait "$pid"
    rc=$?
    # The conformance runs stop their servers on SIGTERM; give them a moment.
    for _ in $(seq 20); do
      [ "$(left)" -eq 0 ] && break
      sleep 0.5
    done
    n=$(left)
    if [ "$n" -eq 0 ] && [ "$rc" -ne 0 ]; then
      say ok "$name: exit $rc, nothing left"
      rm -f "$log"
    else
      say FAIL "$name: exit $rc, $n process(es) left: $(pgrep -af "cargo|rustc|conformance|redis-server" | cut -c1-100 | tr '\n' ';') (log: $log)"
      pkill -f "rustc .*--crate-name lockstorm|adapters/python/conformance[.]py|redis-server"
    fi
  done
done
echo "test_script trials: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
