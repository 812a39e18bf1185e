#!/usr/bin/env bash
# Adversarial trials of a real Redis Cluster as node 0 (issue 39, `[cluster]`): a signal
# mid-run (during the split, during the replication cut, with built-in clients and with a
# library's workers) leaves no cluster node or worker behind and keeps the history; bad
# input is one line, exit 2. Run from the repository root after `./test --install-only`
# and a release build, with no other cluster or Sentinel run meanwhile:
#   tests/trials/cluster.sh [ROUNDS]
# Prints one line per trial and the totals.
set -u
L=target/release/lockstorm
SPLIT=scenarios/real/cluster-split-brain.toml
CUT=scenarios/real/cluster-replication-cut.toml
rounds=${1:-3}
pass=0 fail=0
say() { if [ "$1" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi; echo "$1: $2"; }
# A cluster node retitles itself "redis-server 127.77.d.k:port"; a redis-py worker runs
# redis_py_lock.py.
left() { pgrep -f "redis-server 127[.]77[.]|redis_py_lock[.]py" | wc -l; }

for round in $(seq "$rounds"); do
  for case in "$SPLIT:TERM:" "$SPLIT:INT:" "$SPLIT:KILL:" "$CUT:TERM:" "$CUT:KILL:" \
      "$SPLIT:TERM:redis-py-lock" "$SPLIT:KILL:redis-py-lock"; do
    IFS=: read -r file sig adapter <<<"$case"
    out=$(mktemp -d)
    args=()
    [ -n "$adapter" ] && args=(--adapter "$adapter")
    setsid "$L" scenario "$file" "${args[@]}" --seed "$round" --quiet --out "$out/run" >"$out/log" 2>&1 &
    pid=$!
    # 6 s after the start: the cluster takes about 3 s to form and settle, so the run is
    # about 3 s in, the split or the cut under way and the lock taken or being taken.
    sleep 6
    kill -s "$sig" "$pid"
    wait "$pid"; rc=$?
    sleep 2
    n=$(left)
    name="round $round $(basename "$file" .toml) SIG$sig${adapter:+ $adapter}"
    if [ "$n" -eq 0 ] && [ -s "$out/run/history.jsonl" ]; then
      say ok "$name: exit $rc, nothing left, history kept ($(wc -l <"$out/run/history.jsonl") lines)"
    else
      say FAIL "$name: exit $rc, $n process(es) left, folder: $(ls "$out/run" 2>&1 | tr '\n' ' ')"
      pkill -9 -f "redis-server 127[.]77[.]|redis_py_lock[.]py"
    fi
    rm -rf "$out"
  done
done

bad() {
  local what=$1; shift
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | grep -c '^lockstorm: error: ')" -eq 1 ] && [ "$(left)" -eq 0 ]; then
    say ok "$what: exit 2, one line: $(printf '%s\n' "$err" | grep '^lockstorm: error: ')"
  else
    say FAIL "$what: exit $rc: $err"
  fi
}
tmp=$(mktemp -d)
bad "two masters" "$L" scenario "$SPLIT" --out "$tmp/a" --set cluster.masters=2
bad "no replica" "$L" scenario "$SPLIT" --out "$tmp/a" --set cluster.replicas=0
bad "min_replicas above the replicas" "$L" scenario "$CUT" --out "$tmp/a" --set cluster.min_replicas_to_write=3
bad "a node timeout under a millisecond" "$L" scenario "$SPLIT" --out "$tmp/a" --set cluster.node_timeout=10us
bad "an unknown cluster key" "$L" scenario "$SPLIT" --out "$tmp/a" --set cluster.quorum=2
bad "too many clients" "$L" scenario "$SPLIT" --out "$tmp/a" --set clients.count=500
bad "three nodes" "$L" scenario "$SPLIT" --out "$tmp/a" --set nodes=3
bad "a Redlock on a cluster" "$L" scenario "$SPLIT" --out "$tmp/a" --set algorithm.kind=redlock
bad "a one-way partition" "$L" scenario "$SPLIT" --out "$tmp/a" --set faults.0.direction=to_nodes
bad "a node pause" "$L" scenario "$SPLIT" --out "$tmp/a" --set 'faults=[{ kind = "pause", node = 0, at = "1s", duration = "1s" }]'
bad "containers" "$L" scenario "$SPLIT" --out "$tmp/a" --backend docker
bad "the simulator's model asked for a split brain" "$L" scenario "$SPLIT" --out "$tmp/a" --backend sim
bad "the simulator's model asked for min-replicas" "$L" scenario "$CUT" --out "$tmp/a" --backend sim --set cluster.min_replicas_to_write=1 --set cluster.min_replicas_max_lag=1s
rm -rf "$tmp"
echo "totals: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
