#!/usr/bin/env bash
# Adversarial trials of workers on a Sentinel deployment (issue 39): a signal mid-run
# leaves no redis-server, sentinel or worker behind, and bad input is one line, exit 2.
# Run from the repository root after `./test --install-only` and a release build:
#   tests/trials/sentinel_workers.sh [ROUNDS]
# Prints one line per trial and the totals.
set -u
L=target/release/lockstorm
T=scenarios/matrix-sentinel/single/30-sentinel-split-brain.toml
# The replication cut: a signal 7 s in comes while the master's replicas are cut off.
CUT=scenarios/matrix-sentinel/single/32-sentinel-replication-cut.toml
rounds=${1:-3}
pass=0 fail=0
say() { if [ "$1" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi; echo "$1: $2"; }
# What a run leaves would show as a deployment's member (a redis-server retitles itself
# "redis-server 127.77.d.k:port", sentinels too) or a redis-py-lock worker. Run no other
# Sentinel run meanwhile.

for round in $(seq "$rounds"); do
  for case in "$T:TERM" "$T:INT" "$T:KILL" "$CUT:TERM" "$CUT:KILL"; do
    file=${case%%:*} sig=${case##*:}
    out=$(mktemp -d)
    setsid "$L" scenario "$file" --adapter redis-py-lock --seed "$round" --quiet --out "$out/run" >"$out/log" 2>&1 &
    pid=$!
    sleep 7
    kill -s "$sig" "$pid"
    wait "$pid"; rc=$?
    sleep 2
    n=$(pgrep -f "redis-server 127[.]77[.]|redis_py_lock[.]py" | wc -l)
    if [ "$n" -eq 0 ] && [ -s "$out/run/history.jsonl" ]; then
      say ok "round $round $(basename "$file" .toml) SIG$sig: exit $rc, nothing left, history kept ($(wc -l <"$out/run/history.jsonl") lines)"
    else
      say FAIL "round $round $(basename "$file" .toml) SIG$sig: exit $rc, $n process(es) left, history $(ls "$out/run" 2>&1 | tr '\n' ' ')"
      pkill -9 -f "redis-server 127[.]77[.]|redis_py_lock[.]py"
    fi
    rm -rf "$out"
  done
done

bad() {
  local what=$1; shift
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  # One error line (an adapter's prediction may be told before it, on its own line).
  if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | grep -c '^lockstorm: error: ')" -eq 1 ]; then
    say ok "$what: exit 2, one line: $(printf '%s\n' "$err" | grep '^lockstorm: error: ')"
  else
    say FAIL "$what: exit $rc: $err"
  fi
}
bad "too many clients on Sentinel" "$L" scenario "$T" --adapter redis-py-lock --set clients.count=500
bad "a one-way partition on Sentinel" "$L" scenario "$T" --adapter redis-py-lock --set 'faults=[{ kind = "partition", at = "1s", nodes = [0], clients = [0], direction = "to_nodes", duration = "1s" }]'
bad "min_replicas above the replicas" "$L" scenario "$T" --adapter redis-py-lock --set sentinel.min_replicas_to_write=3
bad "a worker that is not there" "$L" scenario "$T" --worker "no-such-worker-binary"
bad "a replication cut of a node that is not there" "$L" scenario "$CUT" --set faults.0.node=1
bad "a replication cut without replicas" "$L" scenario scenarios/partition.toml --set 'faults=[{ kind = "replication_cut", at = "1s" }]'
bad "the simulator's model asked for a split brain" "$L" scenario "$T" --backend sim
bad "the simulator's model asked for min-replicas" "$L" scenario "$CUT" --backend sim --set sentinel.min_replicas_to_write=1 --set sentinel.min_replicas_max_lag=1s
echo "totals: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
