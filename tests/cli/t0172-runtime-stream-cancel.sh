# Stream jobs never complete by themselves: a task that exits 0 is restarted like any other; cancel ends the job (cancelled, 143), with its running and waiting tasks.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2
until_ok 60 nodes_up 1 || fail "n1 did not register"
mkdir -p "$TMP/runs"
runs() { [ -e "$TMP/runs/ok-0" ] && wc -l <"$TMP/runs/ok-0" || echo 0; }
runs_ge() { [ "$(runs)" -ge "$1" ]; }
# Task 0 exits 0 at once; task 1 runs on.
cat >"$TMP/svc.json" <<J
{"name": "svc", "kind": "stream",
 "tasks": [{"cmd": "echo run >> $TMP/runs/ok-0", "cpus": 1},
           {"cmd": "touch $TMP/runs/up-1; exec sleep 600", "cpus": 1}]}
J
s=$("$HRM" submit "$TMP/svc.json") || fail "submit a stream job file"
until_ok 60 runs_ge 2 || fail "a stream task that exited 0 was not restarted"
until_ok 60 test -e "$TMP/runs/up-1" || fail "task 1 never ran"
"$HRM" job "$s" --json >"$TMP/j"
python3 - "$TMP/j" <<'P' || fail "the job ended by itself"
import json, sys
j = json.load(open(sys.argv[1])); j = j.get("job", j)
assert j["kind"] == "stream" and j["state"] == "running" and j["exit"] is None, j
assert j["done"] == 0 and j["failed"] == 0, j
assert j["tasks"][0]["restarts"] >= 1 and j["tasks"][0]["exit"] == 0, j["tasks"][0]
P
expect_exit 0 timeout 120 "$HRM" cancel "$s"
expect_exit 143 timeout 120 "$HRM" wait "$s"
"$HRM" job "$s" --json >"$TMP/j"
python3 - "$TMP/j" <<'P' || fail "cancel did not end the stream job"
import json, sys
j = json.load(open(sys.argv[1])); j = j.get("job", j)
assert j["state"] == "cancelled" and j["exit"] == 143, j
assert [t["state"] for t in j["tasks"]] == ["cancelled", "cancelled"], j["tasks"]
P
"$HRM" jobs >"$TMP/jobs"
grep -Eq "^ +$s +svc +[^ ]+ +stream +cancelled" "$TMP/jobs" || { cat "$TMP/jobs"; fail "hrm jobs: not a cancelled stream job"; }
