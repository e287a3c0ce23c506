# A node that flaps: its agent stopped (SIGSTOP) past --node-timeout goes down and its task runs again elsewhere; resumed (SIGCONT), it comes back, its stale run is killed, and each task's result is counted once.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --node-timeout 3s --reconcile 3s
start_agent n1 --cpus 2 --mem 2G
start_agent n2 --cpus 2 --mem 2G
until_ok 60 nodes_up 2 || fail "nodes did not register"
mkdir -p "$TMP/runs"
node_is() { "$HRM" nodes | matches "^$1 .* $2 "; } # NODE STATE
stopped=
trap 'if [ -n "$stopped" ]; then kill -CONT "$stopped" 2>/dev/null || true; fi; rt_cleanup; rm -rf "$TMP"; [ -z "${RT_LEFT:-}" ] || exit 1' EXIT

# Two two-core tasks, one on each node; each records its start and pid, holds until the test
# creates $TMP/go, then records its end.
j=$("$HRM" submit --count 2 --cpus 2 -- sh -c "echo start \$HRM_NODE \$\$ >> $TMP/runs/\$HRM_TASK_ID
  while [ ! -e $TMP/go ]; do sleep 0.05; done; echo end \$HRM_NODE >> $TMP/runs/\$HRM_TASK_ID") || fail "submit"
until_ok 60 started "$j" 2 || fail "the tasks never started"
until_ok 60 sh -c "grep -qs 'start n1' $TMP/runs/0 $TMP/runs/1" || fail "nothing ran on n1"
t=$(grep -l "start n1" "$TMP/runs/0" "$TMP/runs/1" | head -1); t=${t##*/}
stale=$(awk '/start n1/ {print $3}' "$TMP/runs/$t")

# n1 stops answering: past the node timeout it is down and its task is placed again.  A new
# node (n3) has room for it.
kill -STOP "$AGENT_n1"; stopped=$AGENT_n1
until_ok 60 node_is n1 down || fail "n1 never went down"
kill -0 "$stale" || fail "the run on the stopped node died"
start_agent n3 --cpus 2 --mem 2G
until_ok 60 sh -c "grep -q 'start n3' $TMP/runs/$t" || fail "task $t was not placed again on n3"

# n1 resumes: it comes back, and the run the master no longer wants is killed.
kill -CONT "$AGENT_n1"; stopped=
until_ok 60 node_is n1 up || fail "n1 did not come back"
until_ok 60 sh -c "! kill -0 $stale 2>/dev/null" || fail "the stale run on n1 was not killed"

touch "$TMP/go"
expect_exit 0 timeout 120 "$HRM" wait "$j"
# Each task ended once: the moved one on n3, the other where it started.
for k in 0 1; do
  [ "$(grep -c '^end' "$TMP/runs/$k")" -eq 1 ] || fail "task $k ended $(grep -c '^end' "$TMP/runs/$k") times"
done
grep -qx "end n3" "$TMP/runs/$t" || fail "task $t did not end on n3"
"$HRM" job "$j" --json >"$TMP/j.json"
python3 - "$TMP/j.json" "$t" <<'P' || { cat "$TMP/j.json" >&2; fail "the job's counts are wrong"; }
import json, sys
d = json.load(open(sys.argv[1])); j = d.get("job", d); t = int(sys.argv[2])
assert (j["done"], j["failed"], j["state"]) == (2, 0, "done"), j
moved = [x for x in j["tasks"] if x["task"] == t][0] if "task" in j["tasks"][0] else j["tasks"][t]
assert moved["attempt"] == 2 and moved["node"] == "n3", moved
P
"$HRM" jobs --summary >"$TMP/sum"
grep -Eq "^tasks +2: 2 done, 0 failed" "$TMP/sum" || { cat "$TMP/sum" >&2; fail "the summary does not count each task once"; }
