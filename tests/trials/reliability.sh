#!/usr/bin/env bash
# Adversarial trials of issue 40 (reliability, round three), one per reproduction of the
# issue, as a hostile user or worker would try them: processes that must not outlive a
# run, inputs that must not exhaust the machine, user files that must not be touched,
# summaries that must not lie, bad input that must not panic or hang. Run from the
# repository root after `./test --install-only` and `cargo build --release`, with no other
# lockstorm run meanwhile (the process checks count every redis-server and worker):
#   tests/trials/reliability.sh [ROUNDS] [FILTER]
# ROUNDS repeats every trial (default 1); FILTER runs only the trials whose name
# contains it. Prints one line per trial and the totals; exit 1 if any failed.
set -u
L=$PWD/target/release/lockstorm
[ -x "$L" ] || { echo "build first: cargo build --release" >&2; exit 2; }
rounds=${1:-1}
filter=${2:-}
pass=0 fail=0
say() { if [ "$1" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi; echo "$1: $2"; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
LEAVES=$PWD/tests/workers/leaves_things.py
CLEAN=$PWD/scenarios/matrix/single/01-clean.toml

# Peak resident memory in MB and exit status of a command: "RC MB".
peak() {
  /usr/bin/time -f '%x %M' -o "$T/time" "$@" >"$T/peak.out" 2>"$T/peak.err"
  read -r rc kb <"$T/time" 2>/dev/null || { rc=$?; kb=0; }
  # A signal: time writes "Command terminated by signal N" first.
  if ! [[ $rc =~ ^[0-9]+$ ]]; then read -r rc kb < <(tail -1 "$T/time"); fi
  echo "$rc $((kb / 1024))"
}

# NAME passes when CMD ends (exit 0 to 2) within MAX_MB of memory and MAX_SECS seconds;
# it is killed at twice that time.
bounded() {
  local name=$1 max_mb=$2 max_secs=$3 start rc mb secs
  shift 3
  start=$(date +%s)
  read -r rc mb < <(peak timeout "$((max_secs * 2))" "$@")
  secs=$(($(date +%s) - start))
  if [ "$rc" -le 2 ] && [ "$mb" -lt "$max_mb" ] && [ "$secs" -lt "$max_secs" ]; then
    say ok "$name: exit $rc, peak $mb MB, $secs s: $(head -c 200 "$T/peak.err")"
  else
    say FAIL "$name: exit $rc, peak $mb MB, $secs s: $(head -c 300 "$T/peak.err")"
  fi
}

# A one-line error and exit 2.
one_line_2() {
  local what=$1; shift
  local err rc
  err=$(timeout 60 "$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ]; then
    say ok "$what: exit 2: $err"
  else
    say FAIL "$what: exit $rc: $(printf '%s' "$err" | head -c 400)"
  fi
}

# Processes with a pid in FILE still alive (not zombies) whose command line holds WHAT:
# a pid the kernel gave to another process since (pid_max is 32768 here, and the trials
# start thousands) is not counted.
alive_of() {
  local n=0 pid
  for pid in $(cat "$1" 2>/dev/null); do
    if [ -r "/proc/$pid/stat" ] && ! awk '{ exit !($3 == "Z") }' "/proc/$pid/stat" 2>/dev/null \
        && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2"; then
      n=$((n + 1))
    fi
  done
  echo "$n"
}

# A worker scenario: one client of leaves_things.py doing ACTIONS at its hello.
worker_file() {
  local file=$1 duration=$2; shift 2
  local argv="\"python3\", \"$LEAVES\""
  for a in "$@"; do argv="$argv, \"$a\""; done
  printf 'backend = "redis"\nduration = "%s"\nnodes = 1\n[algorithm]\nkind = "single"\n[clients]\ncount = 1\nworker = [%s]\n' \
    "$duration" "$argv" >"$file"
}

trial() { [ -z "$filter" ] || [[ $1 == *"$filter"* ]]; }

for round in $(seq "$rounds"); do
  R="round $round"

  # --- Processes outlive lockstorm ---------------------------------------------------
  for action in unmarked redis; do
    for how in normal KILL TERM; do
      name="$R: a worker's $action helper, lockstorm ends by $how"
      trial "$name" || continue
      rm -f "$T/pids"
      if [ "$how" = normal ]; then d=2s; else d=300s; fi
      worker_file "$T/w.toml" "$d" "$action:$T/pids"
      if [ "$action" = redis ]; then what=redis-server; else what=sleep; fi
      "$L" scenario "$T/w.toml" --quiet --out "$T/run" >/dev/null 2>&1 &
      pid=$!
      # The helper runs as what it becomes (it writes its pid before it execs), or the
      # trial would test nothing.
      running=0
      for _ in $(seq 100); do
        [ "$(alive_of "$T/pids" "$what")" -eq 1 ] && { running=1; break; }
        sleep 0.02
      done
      if [ "$how" != normal ]; then
        sleep 1 # past the reaper's next look
        kill -s "$how" "$pid"
      fi
      wait "$pid"; rc=$?
      sleep 1
      n=$(alive_of "$T/pids" "$what")
      if [ "$running" = 0 ]; then
        say FAIL "$name: exit $rc, the helper was never seen running as $what"
      elif [ "$n" -eq 0 ]; then
        say ok "$name: exit $rc, helper gone"
      else
        say FAIL "$name: exit $rc, $n helper(s) alive ($(cat "$T/pids" 2>/dev/null | tr '\n' ' '))"
        for p in $(cat "$T/pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
      fi
      rm -rf "$T/run"
    done
  done

  name="$R: a LOCKSTORM_REDIS_SERVER wrapper that daemonizes"
  if trial "$name"; then
    cat >"$T/wrap.sh" <<EOF
#!/bin/sh
exec redis-server "\$@" --daemonize yes --pidfile $T/daemon.pid
EOF
    chmod +x "$T/wrap.sh"
    rm -f "$T/daemon.pid"
    out=$(LOCKSTORM_REDIS_SERVER=$T/wrap.sh timeout 120 "$L" scenario "$CLEAN" --quiet --out "$T/run" 2>&1); rc=$?
    sleep 1
    n=$(alive_of "$T/daemon.pid" redis-server)
    if [ "$n" -eq 0 ]; then
      say ok "$name: exit $rc, no daemon left: $(printf '%s' "$out" | tail -1 | head -c 200)"
    else
      say FAIL "$name: exit $rc, the daemonized redis-server $(cat "$T/daemon.pid") is alive"
      kill -9 "$(cat "$T/daemon.pid")" 2>/dev/null
    fi
    rm -rf "$T/run"
  fi

  # --- Memory, CPU and disk ------------------------------------------------------------
  name="$R: clients.locks=4294967295"
  trial "$name" && one_line_2 "$name" "$L" scenario scenarios/partition.toml --out "$T/run" --set clients.locks=4294967295
  name="$R: clients.locks=100000000 for 2 s"
  if trial "$name"; then
    bounded "$name" 1024 60 "$L" scenario scenarios/partition.toml --quiet --out "$T/run" --set clients.locks=100000000 --set duration=2s
    rm -rf "$T/run"
  fi
  name="$R: check on 300 MB of lines naming distinct locks"
  if trial "$name"; then
    python3 - "$T/big.jsonl" <<'EOF'
import sys
n = 300 * 1024 * 1024 // 420
with open(sys.argv[1], "w") as f:
    for i in range(n):
        t = 4 * i
        f.write('{"type":"invoke","t_us":%d,"client":0,"op":"acquire","lock":"L%d","mode":"exclusive"}\n' % (t, i))
        f.write('{"type":"ok","t_us":%d,"client":0,"op":"acquire","lock":"L%d","mode":"exclusive","token":"%016x","valid_until_us":%d}\n' % (t + 1, i, i, t + 2))
        f.write('{"type":"invoke","t_us":%d,"client":0,"op":"release","lock":"L%d","mode":"exclusive","token":"%016x"}\n' % (t + 2, i, i))
        f.write('{"type":"ok","t_us":%d,"client":0,"op":"release","lock":"L%d","mode":"exclusive","token":"%016x"}\n' % (t + 3, i, i))
EOF
    bounded "$name" 1024 150 "$L" check "$T/big.jsonl"
  fi
  name="$R: report on a 300 MB history"
  if trial "$name"; then
    mkdir -p "$T/rep"
    [ -s "$T/big.jsonl" ] || { say FAIL "$name: run it with the check trial, which writes the history"; continue; }
    cp "$T/big.jsonl" "$T/rep/history.jsonl"
    bounded "$name" 2048 300 "$L" report "$T/rep"
    rm -rf "$T/rep"
  fi
  rm -f "$T/big.jsonl"
  name="$R: a huge ttl with a short duration and a history cap"
  if trial "$name"; then
    bounded "$name" 4096 60 "$L" scenario scenarios/partition.toml --quiet --out "$T/run" --set algorithm.ttl=1000000s --set duration=20s --set clients.count=50 --max-history-mb 1
    rm -rf "$T/run"
  fi
  name="$R: a 64 MB scenario of 10^6 faults"
  if trial "$name"; then
    { echo 'duration = "10s"'; for _ in $(seq 200); do echo '[[faults]]'; echo 'at = "1s"'; echo 'kind = "crash"'; echo 'node = 0'; echo 'duration = "1s"'; done; } >"$T/f.toml"
    python3 -c "
import sys
with open('$T/f.toml', 'a') as f:
    f.write('[[faults]]\nat = \"1s\"\nkind = \"crash\"\nnode = 0\nduration = \"1s\"\n' * 1000000)
"
    one_line_2 "$name" "$L" scenario "$T/f.toml" --out "$T/run"
    rm -f "$T/f.toml"
  fi
  name="$R: scenario /dev/zero"
  trial "$name" && one_line_2 "$name" "$L" scenario /dev/zero --out "$T/run"
  name="$R: merge of a 1 GB padded summary.json"
  if trial "$name"; then
    rm -rf "$T/sh" && mkdir -p "$T/sh"
    "$L" scenario scenarios/partition.toml --seeds 2 --shard 0/2 --quiet --out "$T/sh/0" >/dev/null 2>&1
    "$L" scenario scenarios/partition.toml --seeds 2 --shard 1/2 --quiet --out "$T/sh/1" >/dev/null 2>&1
    python3 -c "
f = open('$T/sh/1/summary.json', 'a'); f.write(' ' * (1 << 30)); f.close()"
    bounded "$name" 512 60 "$L" merge "$T/sh/0" "$T/sh/1" --quiet --out "$T/merged"
    name="$R: merge of a shard.json with clients.locks=4294967295"
    if trial "$name"; then
      rm -rf "$T/sh/1" && "$L" scenario scenarios/partition.toml --seeds 2 --shard 1/2 --quiet --out "$T/sh/1" >/dev/null 2>&1
      if [ -f "$T/sh/1/shard.json" ]; then
        python3 - "$T/sh/1/shard.json" <<'EOF'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
def tamper(v):
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "overrides" and isinstance(x, list):
                x.append("clients.locks=4294967295")
            else:
                tamper(x)
    elif isinstance(v, list):
        for x in v:
            tamper(x)
tamper(d)
json.dump(d, open(p, "w"))
EOF
        one_line_2 "$name" "$L" merge "$T/sh/0" "$T/sh/1" --quiet --out "$T/merged2"
      else
        say FAIL "$name: no shard.json in a shard's folder ($(ls "$T/sh/1" | tr '\n' ' '))"
      fi
    fi
    rm -rf "$T/sh" "$T/merged" "$T/merged2"
  fi

  # --- User files and --out --------------------------------------------------------------
  name="$R: analysis --out a folder holding the user's README.md and index.html"
  if trial "$name"; then
    rm -rf "$T/u" && mkdir -p "$T/u" && echo mine >"$T/u/README.md" && echo mine >"$T/u/index.html"
    mkdir -p "$T/sc" && cp scenarios/single.toml "$T/sc/"
    timeout 300 "$L" analysis --scenarios "$T/sc" --seeds 1 --out "$T/u" >/dev/null 2>"$T/err"; rc=$?
    if [ "$(cat "$T/u/README.md")" = mine ] && [ "$(cat "$T/u/index.html")" = mine ] && [ "$rc" -eq 2 ]; then
      say ok "$name: exit 2, untouched: $(head -1 "$T/err")"
    else
      say FAIL "$name: exit $rc, README.md: $(head -c 40 "$T/u/README.md"), index.html: $(head -c 40 "$T/u/index.html")"
    fi
    rm -rf "$T/u" "$T/sc"
  fi
  name="$R: sweep --out p/reports/s beside a reports site and user files"
  if trial "$name"; then
    rm -rf "$T/p" && mkdir -p "$T/p/reports/s"
    echo mine >"$T/p/reports/README.md"; echo mine >"$T/p/reports/index.html"
    for f in sweep.csv sweep.json timing.json; do echo mine >"$T/p/reports/s/$f"; done
    timeout 300 "$L" sweep scenarios/single.toml --vary algorithm.ttl=1s,2s --seeds 1 --quiet --out "$T/p/reports/s" >/dev/null 2>"$T/err"; rc=$?
    changed=""
    for f in reports/README.md reports/index.html reports/s/sweep.csv reports/s/sweep.json reports/s/timing.json; do
      [ "$(cat "$T/p/$f")" = mine ] || changed="$changed $f"
    done
    if [ -z "$changed" ]; then
      say ok "$name: exit $rc, nothing of the user's changed: $(head -1 "$T/err")"
    else
      say FAIL "$name: exit $rc, changed:$changed"
    fi
    rm -rf "$T/p"
  fi
  name="$R: merge of a matrix's shards into a folder holding the user's pages"
  if trial "$name"; then
    rm -rf "$T/ms" && mkdir -p "$T/ms/mine/missing"
    printf '[[adapter]]\nname = "missing"\ncommand = ["no-such-lock-worker"]\nruntime = "none"\nkind = "multi"\n' >"$T/ms/list.toml"
    for i in 0 1; do
      timeout 120 "$L" matrix --list "$T/ms/list.toml" --catalogue scenarios/matrix --seeds 1 --shard $i/2 --out "$T/ms/s$i" >/dev/null 2>&1
    done
    echo mine >"$T/ms/mine/README.md"; echo mine >"$T/ms/mine/missing/index.html"
    timeout 120 "$L" merge "$T/ms/s0" "$T/ms/s1" --out "$T/ms/mine" >/dev/null 2>"$T/err"; rc=$?
    if [ "$rc" -eq 2 ] && [ "$(cat "$T/ms/mine/README.md")" = mine ] && [ "$(cat "$T/ms/mine/missing/index.html")" = mine ] \
      && [ ! -e "$T/ms/mine/matrix.json" ]; then
      say ok "$name: exit 2, untouched: $(head -1 "$T/err")"
    else
      say FAIL "$name: exit $rc, README.md: $(head -c 40 "$T/ms/mine/README.md"), missing/index.html: $(head -c 40 "$T/ms/mine/missing/index.html")"
    fi
    rm -rf "$T/ms"
  fi
  name="$R: matrix --worker --out X/inner/out"
  if trial "$name"; then
    rm -rf "$T/X" && mkdir -p "$T/X/inner" && echo mine >"$T/X/inner/index.html"
    timeout 300 "$L" matrix --worker "$L worker" --worker-kind single --faults 01-clean --seeds 1 --out "$T/X/inner/out" >/dev/null 2>"$T/err"; rc=$?
    outside=$(cd "$T/X/inner" && ls | grep -v '^out$' | grep -v '^index.html$')
    if [ "$(cat "$T/X/inner/index.html")" = mine ] && [ -z "$outside" ]; then
      say ok "$name: exit $rc, nothing written beside out/"
    else
      say FAIL "$name: exit $rc, index.html: $(head -c 30 "$T/X/inner/index.html"), beside out/: $outside"
    fi
    rm -rf "$T/X"
  fi
  name="$R: a matrix rerun into an old matrix folder, stopped at 3 s"
  if trial "$name"; then
    rm -rf "$T/mx"
    "$L" matrix --worker "$L worker" --worker-kind single --faults 01-clean,03-majority-crash-restart --seeds 1 --out "$T/mx" >/dev/null 2>&1
    before=$(ls "$T/mx" | tr '\n' ' ')
    "$L" matrix --worker "$L worker" --worker-kind single --faults 01-clean,03-majority-crash-restart --seeds 4 --out "$T/mx" >/dev/null 2>"$T/err" &
    pid=$!; sleep 3; kill -s INT "$pid"; wait "$pid"; rc=$?
    # What the folder's pages and matrix.json link must exist; what ran is what they say.
    dead=""
    for page in "$T/mx/index.html" "$T/mx/README.md" "$T/mx"/*/index.html; do
      [ -f "$page" ] || continue
      for link in $(grep -o 'href="[^"#]*"' "$page" | sed 's/href="//; s/"$//' | grep -v '^http' | grep -v '^[.][.]/' | sort -u); do
        [ -e "$(dirname "$page")/$link" ] || dead="$dead $link"
      done
    done
    said=$(python3 -c "import json; d=json.load(open('$T/mx/matrix.json')); print(d.get('partial'), d.get('partial_reason'))" 2>&1 | head -c 200)
    if [ -z "$dead" ]; then
      say ok "$name: exit $rc, no dead link; matrix.json: $said"
    else
      say FAIL "$name: exit $rc, dead links:$dead; matrix.json: $said (before: $before)"
    fi
    rm -rf "$T/mx"
  fi
  name="$R: an adapter named ../../evil-escape"
  if trial "$name"; then
    rm -rf "$T/m" && mkdir -p "$T/m/a/b"
    printf '[[adapter]]\nname = "../../evil-escape"\ncommand = ["%s", "worker"]\nruntime = "rust"\nkind = "single"\nfaketime = false\npromise = "none"\noptions = "none"\n' "$L" >"$T/m/list.toml"
    timeout 300 "$L" matrix --list "$T/m/list.toml" --faults 01-clean --seeds 1 --out "$T/m/a/b/out" >/dev/null 2>"$T/err"; rc=$?
    escaped=$(find "$T/m" -name '*evil*' -o -name 'evil-escape' | head -3)
    if [ -z "$escaped" ] && [ "$rc" -eq 2 ]; then
      say ok "$name: exit 2: $(head -1 "$T/err")"
    else
      say FAIL "$name: exit $rc, written: $escaped; $(head -c 300 "$T/err")"
    fi
    rm -rf "$T/m"
  fi
  name="$R: a sweep into another sweep's folder"
  if trial "$name"; then
    rm -rf "$T/s"
    "$L" sweep scenarios/single.toml --vary algorithm.ttl=1s,2s --seeds 1 --quiet --out "$T/s" >/dev/null 2>&1
    before=$(ls "$T/s" | sort | tr '\n' ' ')
    "$L" sweep scenarios/partition.toml --vary clients.count=2,3 --seeds 1 --quiet --out "$T/s" >/dev/null 2>"$T/err"; rc=$?
    stale=$(grep -l "single" "$T/s"/*.svg 2>/dev/null | head -3)
    if [ "$rc" -eq 2 ] || [ -z "$stale" ]; then
      say ok "$name: exit $rc, no plot of the other scenario kept: $(head -1 "$T/err")"
    else
      say FAIL "$name: exit $rc, kept: $stale (before: $before)"
    fi
    rm -rf "$T/s"
  fi

  # --- Summaries that lie ----------------------------------------------------------------
  name="$R: two runs with the same --out at once"
  if trial "$name"; then
    rm -rf "$T/same"
    "$L" scenario scenarios/partition.toml --quiet --out "$T/same" >/dev/null 2>"$T/e1" &
    a=$!
    "$L" scenario scenarios/release-del.toml --quiet --out "$T/same" >/dev/null 2>"$T/e2" &
    b=$!
    wait $a; ra=$?; wait $b; rb=$?
    if [ "$ra" -eq 2 ] || [ "$rb" -eq 2 ]; then
      say ok "$name: exits $ra and $rb, one refused: $(cat "$T/e1" "$T/e2" | head -1)"
    else
      say FAIL "$name: exits $ra and $rb, both wrote"
    fi
    rm -rf "$T/same"
  fi
  name="$R: a worker that exits 3 while its child keeps its stdout"
  if trial "$name"; then
    cat >"$T/exit3.py" <<'EOF'
import json, os, subprocess, sys
for line in sys.stdin:
    r = json.loads(line)
    if r["type"] == "hello":
        print(json.dumps({"type": "hello_ok", "in_reply_to": r["id"], "library": "exit-3", "version": "1"}), flush=True)
    else:
        # A child that keeps the worker's stdout open, then the worker dies with status 3.
        subprocess.Popen(["sleep", "30"], stdout=sys.stdout)
        os._exit(3)
EOF
    printf 'backend = "redis"\nduration = "3s"\nnodes = 1\n[algorithm]\nkind = "single"\n[clients]\ncount = 1\nworker = ["python3", "%s"]\n' "$T/exit3.py" >"$T/e.toml"
    started=$(date +%s)
    timeout 120 "$L" scenario "$T/e.toml" --quiet --out "$T/run" >"$T/out" 2>"$T/err"; rc=$?
    took=$(( $(date +%s) - started ))
    # Found when it exits, not at the request's 30 s deadline.
    if [ "$rc" -eq 2 ] && grep -q "exited (exit status: 3)" "$T/err" && ! grep -q "NOT live" "$T/out" && [ "$took" -lt 10 ]; then
      say ok "$name: exit 2 after ${took}s: $(head -1 "$T/err")"
    else
      say FAIL "$name: exit $rc after ${took}s: $(head -c 200 "$T/out") $(head -c 200 "$T/err")"
    fi
    rm -rf "$T/run"
  fi
  name="$R: a node's port taken by another process during its crash"
  if trial "$name"; then
    printf 'backend = "redis"\nduration = "8s"\nnodes = 1\n[algorithm]\nkind = "single"\nttl = "500ms"\n[clients]\ncount = 2\n[[faults]]\nat = "1s"\nkind = "crash"\nnode = 0\nrestart_after = "3s"\n' >"$T/port.toml"
    rm -rf "$T/run"
    "$L" scenario "$T/port.toml" --quiet --out "$T/run" >"$T/out" 2>"$T/err" &
    pid=$!
    port=""
    for _ in $(seq 100); do
      port=$(for c in $(cat /proc/$pid/task/*/children 2>/dev/null); do tr '\0' ' ' </proc/$c/cmdline 2>/dev/null; done | grep -o '127[.]0[.]0[.]1:[0-9]*' | head -1 | cut -d: -f2)
      [ -n "$port" ] && break; sleep 0.05
    done
    sleep 1.5 # past the crash at 1 s, before the restart at 4 s
    python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $port)); s.listen(); time.sleep(8)" &
    taker=$!
    wait "$pid"; rc=$?
    kill "$taker" 2>/dev/null; wait "$taker" 2>/dev/null
    if [ "$rc" -eq 2 ] && [ "$(grep -c . "$T/err")" -eq 1 ] && grep -q "could not be restarted" "$T/err" && [ -s "$T/run/history.jsonl" ]; then
      say ok "$name: exit 2: $(head -c 250 "$T/err")"
    else
      say FAIL "$name: exit $rc: $(head -c 200 "$T/out") $(head -c 300 "$T/err")"
    fi
    rm -rf "$T/run"
  fi
  name="$R: an analysis stopped at 1.5 s over an earlier one"
  if trial "$name"; then
    rm -rf "$T/an" "$T/sc" && mkdir -p "$T/sc" && cp scenarios/single.toml scenarios/partition.toml scenarios/redlock-chaos.toml "$T/sc/"
    "$L" analysis --scenarios "$T/sc" --seeds 1 --out "$T/an" >/dev/null 2>&1
    before=$(grep -c . "$T/an/README.md")
    "$L" analysis --scenarios "$T/sc" --seeds 30 --out "$T/an" >/dev/null 2>&1 &
    pid=$!; sleep 1.5; kill -s INT "$pid"; wait "$pid"; rc=$?
    if [ ! -e "$T/an/README.md" ] && [ ! -e "$T/an/index.html" ]; then
      say ok "$name: exit $rc, no index of the earlier run left ($before lines before)"
    else
      say FAIL "$name: exit $rc, the index is still there: $(head -3 "$T/an/README.md" | tr '\n' ' ')"
    fi
    rm -rf "$T/an" "$T/sc"
  fi
  for sig in INT TERM; do
    name="$R: partial_reason of a SIG$sig at 0.2 s"
    trial "$name" || continue
    rm -rf "$T/run"
    "$L" scenario scenarios/partition.toml --seeds 50 --quiet --out "$T/run" >/dev/null 2>&1 &
    pid=$!; sleep 0.2; kill -s "$sig" "$pid"; wait "$pid"; rc=$?
    reason=$(python3 -c "import json; d=json.load(open('$T/run/summary.json')); print(d.get('partial'), d.get('partial_reason'), d.get('live'))" 2>&1)
    if [[ $reason == True*"SIG$sig"* ]] && [[ $reason != *" False" ]]; then
      say ok "$name: exit $rc: $reason"
    else
      say FAIL "$name: exit $rc: $reason"
    fi
  done
  name="$R: a multi-seed run stopped after some seeds finished keeps a history"
  if trial "$name"; then
    rm -rf "$T/run"
    "$L" scenario scenarios/redlock-chaos.toml --seeds 100 --jobs 1 --set duration=1800s --out "$T/run" >"$T/out" 2>&1 &
    pid=$!; sleep 8; kill -s INT "$pid"; wait "$pid"; rc=$?
    said=$(python3 -c "import json; d=json.load(open('$T/run/summary.json')); print(len(d.get('seeds', [])), d.get('partial_reason'))" 2>&1)
    # The history kept, or the truth about it: the seeds that finished and how to make it.
    if [ -s "$T/run/history.jsonl" ] || [[ $said == 0* ]] || grep -q "does not simulate seed .* again for its history" "$T/out"; then
      say ok "$name: exit $rc, $said, history $(wc -l <"$T/run/history.jsonl" 2>/dev/null || echo none)"
    else
      say FAIL "$name: exit $rc, $said, folder: $(ls "$T/run" | tr '\n' ' ')"
    fi
  fi
  for cmd in shrink explore merge; do
    name="$R: $cmd stopped while it works leaves a truthful folder"
    trial "$name" || continue
    rm -rf "$T/run" "$T/src"
    case $cmd in
      shrink) "$L" scenario scenarios/release-del.toml --set duration=600s --quiet --out "$T/src" >/dev/null 2>&1
              "$L" shrink "$T/src" --quiet --out "$T/run" >/dev/null 2>"$T/err" & ;;
      explore) "$L" explore scenarios/partition.toml --nodes 5 --clients 3 --ticks 16 --crashes 2 --partitions 2 --quiet --out "$T/run" >/dev/null 2>"$T/err" & ;;
      merge) "$L" scenario scenarios/redlock-chaos.toml --set duration=36000s --seeds 2 --shard 0/2 --quiet --out "$T/src/0" >/dev/null 2>&1
             "$L" scenario scenarios/redlock-chaos.toml --set duration=36000s --seeds 2 --shard 1/2 --quiet --out "$T/src/1" >/dev/null 2>&1
             "$L" merge "$T/src/0" "$T/src/1" --quiet --out "$T/run" >/dev/null 2>"$T/err" & ;;
    esac
    pid=$!; sleep 1; kill -s TERM "$pid"; wait "$pid"; rc=$?
    if [ ! -e "$T/run/summary.json" ]; then
      state="no summary.json"
    else
      state=$(python3 -c "import json; d=json.load(open('$T/run/summary.json')); print('partial' if d.get('partial') else 'complete')" 2>&1)
    fi
    # Stopped (143) with no summary or a partial one; or done before the signal (0, 1).
    if { [ "$rc" -eq 143 ] && [ "$state" != complete ]; } || [ "$rc" -le 1 ]; then
      say ok "$name: exit $rc, $state"
    else
      say FAIL "$name: exit $rc, $state: $(head -c 200 "$T/err")"
    fi
  done
  rm -rf "$T/run" "$T/src"

  # --- Bad input that panics or hangs ----------------------------------------------------
  for cmd in "scenario scenarios/single.toml --quiet --out $T/run" "explore scenarios/single.toml --time 2 --out $T/run" \
      "sweep scenarios/single.toml --vary algorithm.ttl=1s,2s --seeds 1 --out $T/run"; do
    name="$R: a closed stdout: ${cmd%% *}"
    trial "$name" || continue
    # shellcheck disable=SC2086
    timeout 300 "$L" $cmd 2>"$T/err" | true
    rc=${PIPESTATUS[0]}
    if [ "$rc" -le 1 ] && ! grep -q panick "$T/err"; then
      say ok "$name: exit $rc"
    else
      say FAIL "$name: exit $rc: $(head -c 200 "$T/err")"
    fi
    rm -rf "$T/run"
  done
  name="$R: report of a FIFO history"
  if trial "$name"; then
    rm -rf "$T/fifo" && mkdir -p "$T/fifo" && mkfifo "$T/fifo/history.jsonl"
    one_line_2 "$name" "$L" report "$T/fifo"
    rm -rf "$T/fifo"
  fi
  name="$R: check of an empty history"
  if trial "$name"; then
    : >"$T/empty.jsonl"
    one_line_2 "$name" "$L" check "$T/empty.jsonl"
  fi
  name="$R: a lost right after hello_ok"
  if trial "$name"; then
    cat >"$T/lost.py" <<'EOF'
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r["type"] == "hello":
        print(json.dumps({"type": "hello_ok", "in_reply_to": r["id"], "library": "lost-early", "version": "1"}))
        print(json.dumps({"type": "lost", "lock": "L0", "reason": "the connection pool was reset"}), flush=True)
    else:
        print(json.dumps({"type": "ok", "in_reply_to": r["id"]}), flush=True)
EOF
    printf 'backend = "redis"\nduration = "2s"\nnodes = 1\n[algorithm]\nkind = "single"\n[clients]\ncount = 1\nworker = ["python3", "%s"]\n' "$T/lost.py" >"$T/l.toml"
    timeout 120 "$L" scenario "$T/l.toml" --quiet --out "$T/run" >"$T/out" 2>"$T/err"; rc=$?
    if [ "$rc" -le 1 ]; then
      say ok "$name: exit $rc: $(head -c 200 "$T/out")"
    else
      say FAIL "$name: exit $rc: $(head -c 300 "$T/err")"
    fi
    rm -rf "$T/run"
  fi
done

left=$(pgrep -f "leaves_things[.]py|redis-server .*lockstorm" | wc -l)
[ "$left" -eq 0 ] || say FAIL "after all trials: $left worker or redis-server process(es) left"
echo "totals: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
