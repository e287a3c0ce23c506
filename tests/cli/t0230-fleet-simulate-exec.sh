# Simulated agents (hrm agent --simulate-exec --count): several in one process register under their own keys, run tasks for their declared duration without a process (sleep N, else SIMULATE_DURATION), report failures and cancels, and report usage like real agents.
. "$(dirname "$0")/rtlib.sh"
keygen
"$HRM" keygen --node sim --node-count 3 "$S/keys" >/dev/null || fail "keygen --node-count"
[ -e "$S/keys/agent-sim3.key" ] || fail "no key for sim3"
grep -c "node=sim" "$S/keys/authorized" | grep -qx 3 || fail "authorized does not list the 3 node keys"
start_master
"$HRM" agent --state "$S" --simulate-exec --count 3 --name-prefix sim --cpus 2 --mem 4G --log-level info >>"$TMP/fleet.log" 2>&1 &
FLEET=$!; PIDS+=("$FLEET")
until_ok 60 nodes_up 3 || fail "3 simulated agents did not register"
"$HRM" nodes --json | matches '"name": "sim2"' || fail "sim2 not listed"
"$HRM" nodes --json | matches '"cgroup": "off"' || fail "a simulated node does not say its tasks have no cgroup"

# Tasks of sleep 0.3 hold their cpu for that long; 6 two-cpu tasks on 3 two-cpu nodes run in waves.
job=$("$HRM" submit --count 6 --cpus 2 -- sleep 0.3) || fail "submit"
expect_exit 0 timeout 60 "$HRM" wait "$job"
"$HRM" job "$job" --json | python3 -c '
import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
assert j["done"] == 6, j["done"]
runs = [(t["end_us"] - t["start_us"]) / 1e6 for t in j["tasks"]]
assert all(r >= 0.3 for r in runs), runs
starts = sorted(t["start_us"] for t in j["tasks"])
# three nodes of one slot each: the last three start after the first three ended
assert starts[3] - starts[0] >= 0.3e6, starts
' || fail "sleep 0.3 tasks did not hold their node for 0.3 s each"
[ -z "$(ls "$S/agents" 2>/dev/null)" ] || fail "a simulated agent wrote output files"

# SIMULATE_DURATION for other commands; false ends failed.
job=$("$HRM" submit --env SIMULATE_DURATION=200ms --cpus 1 -- ./anything) || fail "submit env"
expect_exit 0 timeout 60 "$HRM" wait "$job"
job=$("$HRM" submit --cpus 1 -- false) || fail "submit false"
expect_exit 1 timeout 60 "$HRM" wait "$job"

# A long task is running (usage reported) and cancelled at once.
job=$("$HRM" submit --cpus 1 --mem 1G -- sleep 600) || fail "submit long"
until_ok 60 started "$job" 1 || fail "the long task did not start"
rss() { "$HRM" job "$job" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); t=d.get("job", d)["tasks"][0]; sys.exit(0 if t.get("rss_peak") == 1<<30 else 1)'; }
until_ok 60 rss || fail "no usage sample with the task's memory"
"$HRM" cancel "$job" >/dev/null || fail "cancel"
expect_exit 143 timeout 60 "$HRM" wait "$job"
kill -0 "$FLEET" || fail "the fleet process died"

# --count without --simulate-exec is refused by name.
expect_exit 2 "$HRM" agent --count 2
out=$("$HRM" agent --count 2 2>&1 || true)
case $out in *"--count needs --simulate-exec"*) ;; *) fail "no reason for --count alone: $out" ;; esac
echo ok
