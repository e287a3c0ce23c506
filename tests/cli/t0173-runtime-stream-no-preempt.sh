# Stream tasks are never preempted for batch work, under a policy that preempts (gsp: a job over its GPU share loses its youngest tasks to a job under it).
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --policy gsp
start_agent n1 --cpus 4 --mem 4G --gpus 2
until_ok 60 nodes_up 1 || fail "n1 did not register"
mkdir -p "$TMP/runs"
# The stream job holds both GPUs.
s=$("$HRM" submit --kind stream --count 2 --gpus 1 --cpus 1 -- sh -c "exec sleep 600") || fail "submit stream"
until_ok 60 started "$s" 2 || fail "the stream tasks did not start"
# A batch job wants both GPUs too (gsp's share: one each), and has a CPU task that the same
# scheduling pass places after its reclaim step: once it has run, a kill would have been sent.
cat >"$TMP/batch.json" <<J
{"name": "b", "tasks": [{"cmd": "exec sleep 600", "gpus": 1, "cpus": 1, "count": 2},
                        {"cmd": "touch $TMP/runs/cpu", "cpus": 1}]}
J
b=$("$HRM" submit "$TMP/batch.json") || fail "submit batch"
until_ok 60 test -e "$TMP/runs/cpu" || fail "the batch job's CPU task never ran"
"$HRM" job "$s" --json >"$TMP/s.json"
"$HRM" job "$b" --json >"$TMP/b.json"
python3 - "$TMP/s.json" "$TMP/b.json" <<'P' || fail "a stream task was preempted for batch work"
import json, sys
load = lambda f: (lambda d: d.get("job", d))(json.load(open(f)))
s, b = load(sys.argv[1]), load(sys.argv[2])
for t in s["tasks"]:
    assert t["state"] == "running" and t["attempt"] == 1 and t["restarts"] == 0, t
assert [t["state"] for t in b["tasks"][:2]] == ["pending", "pending"], b["tasks"]
P
grep -q "preempt\|task_kill" "$TMP/master.log" && fail "the master's log mentions a kill" || true
"$HRM" cancel "$s" >/dev/null || fail "cancel stream"
# The GPUs free, the batch job's GPU tasks start.
until_ok 60 started "$b" 2 || fail "the batch GPU tasks did not start once the GPUs were free"
"$HRM" cancel "$b" >/dev/null || fail "cancel batch"
