# hrm events: a node that registers shows node_up; killed, it shows node_down (timeout) once the master notices its silence.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --node-timeout 3s
start_agent n1 --cpus 2 --mem 2G
start_agent n2 --cpus 2 --mem 2G
until_ok 60 nodes_up 2 || fail "nodes did not register"
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
echo ok
