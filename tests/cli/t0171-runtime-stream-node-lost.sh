# Stream jobs: a task whose node is killed is restarted on another node at once (no backoff: not the task's doing), counted as a restart.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --node-timeout 2s
start_agent n1 --cpus 1
start_agent n2 --cpus 1
until_ok 60 nodes_up 2 || fail "nodes did not register"
mkdir -p "$TMP/runs"
lines() { [ -e "$TMP/runs/where" ] && wc -l <"$TMP/runs/where" || echo 0; }
lines_ge() { [ "$(lines)" -ge "$1" ]; }
s=$("$HRM" submit --kind stream -- sh -c "echo \$HRM_NODE >> $TMP/runs/where; exec sleep 600") \
  || fail "submit"
until_ok 60 lines_ge 1 || fail "the stream task never ran"
first=$(head -1 "$TMP/runs/where")
case $first in n1) kill -KILL "$AGENT_n1" ;; n2) kill -KILL "$AGENT_n2" ;; *) fail "ran on '$first'" ;; esac
until_ok 60 lines_ge 2 || fail "the stream task was not restarted after its node died"
second=$(sed -n 2p "$TMP/runs/where")
[ "$second" != "$first" ] && [ -n "$second" ] || fail "restarted on '$second' after $first died"
"$HRM" job "$s" --json >"$TMP/j"
python3 - "$TMP/j" "$second" <<'P' || fail "the restart is not recorded"
import json, sys
j = json.load(open(sys.argv[1])); j = j.get("job", j); t = j["tasks"][0]
assert j["state"] == "running", j["state"]
assert t["state"] == "running" and t["node"] == sys.argv[2], t
assert t["restarts"] == 1, t
assert t["backoff_us"] == 0, t
P
"$HRM" cancel "$s" >/dev/null || fail "cancel"
expect_exit 143 timeout 120 "$HRM" wait "$s"
