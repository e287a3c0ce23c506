# A queue of 50,000 tasks on 50 simulated agents, with jobs arriving one by one while it drains: the arrivals join the master's scheduler without rebuilding it over the queue, and every task of every job runs exactly once (one attempt, done).
. "$(dirname "$0")/rtlib.sh"
N=50
BIG=50000
keygen
"$HRM" keygen --node f --node-count $N "$S/keys" >/dev/null || fail "keygen --node-count"
start_master --log-level debug
"$HRM" agent --state "$S" --simulate-exec --count $N --name-prefix f --cpus 4 --mem 4G \
  --log-level warning >>"$TMP/fleet.log" 2>&1 &
PIDS+=("$!")
until_ok 120 nodes_up $N || fail "not all $N agents registered"
rebuilds() { grep -c "scheduler rebuilt" "$TMP/master.log" || true; }

big=$("$HRM" submit --count $BIG --cpus 1 -- sleep 0.02) || fail "submit $BIG tasks"
# The queue is in the scheduler once a task of it runs.
running() { "$HRM" job "$big" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); sys.exit(0 if j["running"] + j["done"] > 0 else 1)'; }
until_ok 120 running || fail "the big job did not start"
before=$(rebuilds)
small=()
for i in $(seq 1 30); do
  small+=("$("$HRM" submit --count 3 --cpus 1 -- sleep 0.01)") || fail "submit small job $i"
done
after=$(rebuilds)
# Before the central role grew, every turn that accepted a job rebuilt it over the whole queue:
# 30 rebuilds here.  Now none is needed (a node that re-registers could cause one).
[ $((after - before)) -le 2 ] ||
  fail "$((after - before)) scheduler rebuilds for 30 arrivals (want none)"
grep -q "scheduler took 1 new jobs" "$TMP/master.log" || fail "no arrival joined the scheduler"

for j in "$big" "${small[@]}"; do
  expect_exit 0 timeout 900 "$HRM" wait "$j"
done
# Every task done, on its first attempt: none ran twice, none was lost.
once() { # JOB COUNT
  "$HRM" job "$1" --all --json | python3 -c '
import json, sys
d = json.load(sys.stdin); j = d.get("job", d); want = int(sys.argv[1])
tasks = j["tasks"]
bad = [t for t in tasks if t["state"] != "done" or t["attempt"] != 1]
if len(tasks) != want or bad:
    sys.exit("%d tasks (want %d), %d not done once: %s" % (len(tasks), want, len(bad), bad[:3]))' "$2"
}
once "$big" $BIG || fail "the big job's tasks did not each run once"
for j in "${small[@]}"; do once "$j" 3 || fail "job $j's tasks did not each run once"; done
echo ok
