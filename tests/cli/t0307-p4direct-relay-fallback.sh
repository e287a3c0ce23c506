# Direct probes fall back to the master's relay per peer: an agent that does not listen for probes (--probe-listen off, as an older agent registers) is probed through the master while another is probed directly by the same process, and a process that ignores the endpoints (--probe-via-master, as an older hrm sched) places everything through the relay; every task runs once either way.
. "$(dirname "$0")/rtlib.sh"
need timeout python3
keygen
start_master --policy sparrow --local-instances 0 --trace "$TMP/trace"
start_agent old --cpus 2 --probe-listen off
start_agent new --cpus 2
until_ok 60 nodes_up 2 || fail "the agents did not register"
node_of() { sed -n "s/.*$1 registered with the master as node \([0-9]*\).*/\1/p" "$TMP/$1.log" | tail -1; }
until_ok 60 test -n "$(node_of old)" || fail "old has no node number"
until_ok 60 test -n "$(node_of new)" || fail "new has no node number"
OLD=$(node_of old) NEW=$(node_of new)
grep -q "probes from scheduler processes taken" "$TMP/old.log" && fail "old listens for probes with --probe-listen off"
start_sched() { # name flags...
  local name=$1; shift
  "$HRM" sched --state "$S" --name "$name" --instances 1 --log-level info "$@" >>"$TMP/$name.log" 2>&1 &
  local pid=$!; PIDS+=("$pid"); eval "SCHED_$name=$pid"
  until_ok 60 grep -q "registered with the master" "$TMP/$name.log" || fail "$name did not register"
}
mkdir -p "$TMP/runs"
start_sched s1
# Four tasks at once on 2 + 2 slots: each round probes both nodes.
a=$("$HRM" submit --count 4 --cpus 1 -- sh -c "echo x >> $TMP/runs/a-\$HRM_TASK_ID; sleep 0.3") || fail "submit a"
expect_exit 0 timeout 120 "$HRM" wait "$a"
ran_once a 4 "the job of the process that probes directly"
kill -TERM "$SCHED_s1"; wait "$SCHED_s1" 2>/dev/null || true
start_sched s2 --probe-via-master
b=$("$HRM" submit --count 4 --cpus 1 -- sh -c "echo x >> $TMP/runs/b-\$HRM_TASK_ID; sleep 0.3") || fail "submit b"
expect_exit 0 timeout 120 "$HRM" wait "$b"
ran_once b 4 "the job of the process that probes through the master"
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true # the trace is complete once it stops

python3 - "$TMP/trace" "$a" "$b" "$OLD" "$NEW" <<'PY' || fail "probes did not take the expected paths: $(grep -E ' (probe|reply) ' "$TMP/trace" | head -20)"
import sys
path, a, b, old, new = sys.argv[1], *map(int, sys.argv[2:])
probes = {}
for line in open(path):
    t, step, j, task, node = line.split()
    if step == "probe":
        key = (int(j), int(node))
        probes[key] = probes.get(key, 0) + 1
# Job a: the old agent through the master, the new one never.
assert probes.get((a, old), 0) >= 1, f"no probe of job {a} relayed to the old agent: {probes}"
assert probes.get((a, new), 0) == 0, f"probes of job {a} relayed to the agent that listens: {probes}"
# Job b: everything through the master, to both.
assert probes.get((b, old), 0) >= 1 and probes.get((b, new), 0) >= 1, f"job {b} not relayed to both: {probes}"
PY
