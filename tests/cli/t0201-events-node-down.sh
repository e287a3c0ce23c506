# hrm events: a node that registers shows node_up; killed, it shows node_down (timeout) once the master notices its silence, and its task task_retried (node_lost).
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --node-timeout 3s
start_agent n1 --cpus 2 --mem 2G
start_agent n2 --cpus 2 --mem 2G
until_ok 60 nodes_up 2 || fail "nodes did not register"
# One task per node (each takes a node's 2 CPUs), both running until $TMP/stop exists: the run
# that outlives its killed agent ends then too.
job=$("$HRM" submit --count 2 --cpus 2 -- sh -c "while [ ! -e '$TMP/stop' ]; do sleep 0.1; done") ||
  fail "submit"
until_ok 60 started "$job" 2 || fail "the tasks did not start"
kill -KILL "$AGENT_n2"
n2_down() {
  "$HRM" nodes --json | python3 -c 'import json, sys
d = json.load(sys.stdin); nodes = d["nodes"] if isinstance(d, dict) else d
sys.exit(0 if any(n["name"] == "n2" and n["state"] == "down" for n in nodes) else 1)'
}
until_ok 60 n2_down || fail "n2 never went down"
# node_events NODE: the node's events, "kind reason" a line
node_events() {
  "$HRM" events --json | python3 -c 'import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if e["node"] == sys.argv[1] and e["kind"].startswith("node_"):
        print(e["kind"], e["detail"].get("reason", "?"))' "$1"
}
# A loaded host may let a live node miss heartbeats too (down, then up again): only the first
# event and, for the killed node, the last are certain.
node_events n2 >"$TMP/n2"
[ "$(head -1 "$TMP/n2")" = "node_up registration" ] || { cat "$TMP/n2" >&2; fail "n2's first event"; }
[ "$(tail -1 "$TMP/n2")" = "node_down timeout" ] || { cat "$TMP/n2" >&2; fail "n2's last event"; }
node_events n1 >"$TMP/n1"
[ "$(head -1 "$TMP/n1")" = "node_up registration" ] || { cat "$TMP/n1" >&2; fail "n1's first event"; }
"$HRM" events --json >"$TMP/events.jsonl"
python3 - "$TMP/events.jsonl" "$job" <<'P' || fail "no task_retried (node_lost) on n2"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if any(e["kind"] == "task_retried" and e["node"] == "n2" and e["job"] == int(sys.argv[2])
                  and e["detail"]["reason"] == "node_lost" for e in ev) else 1)
P
touch "$TMP/stop"
expect_exit 0 timeout 120 "$HRM" wait "$job"
echo ok
