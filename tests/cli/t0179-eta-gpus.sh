# A GPU job waiting for a busy GPU names the GPUs, not the CPUs that are free; the node without
# GPUs is not counted as one that could run it.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent g1 --cpus 4 --mem 4G --gpus 1
start_agent c1 --cpus 4 --mem 4G
until_ok 60 nodes_up 2 || fail "nodes did not register"
a=$("$HRM" submit --cpus 1 --gpus 1 --time 5m -- sh -c "touch '$TMP/go'; while [ ! -e '$TMP/stop' ]; do sleep 0.05; done") || fail "submit a"
until_ok 60 test -e "$TMP/go" || fail "a did not start"
b=$("$HRM" submit --cpus 1 --gpus 1 --time 1m -- true) || fail "submit b"
"$HRM" job "$b" --json >"$TMP/b.json"
python3 - "$TMP/b.json" <<'P' || { cat "$TMP/b.json" >&2; fail "b: reason or estimate"; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["pending_reason"] == "waiting for 1 CPU and 1 GPU free on one node (GPUs short on 1 node)", j["pending_reason"]
# a is expected to run 5 minutes: b starts when it ends, within them.
assert isinstance(j["estimated_start_s"], int) and 0 <= j["estimated_start_s"] <= 300, j["estimated_start_s"]
P
touch "$TMP/stop"
expect_exit 0 timeout 60 "$HRM" wait "$b"
echo "ok"
