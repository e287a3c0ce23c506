# What hrm job, jobs and nodes show: a run's runtime is never below its CPU time, task counts of
# nodes follow the table (not a heartbeat), an unfinished job has no exit, a partial task list
# says so and pages, the summary counts cancelled jobs and has a JSON form, hrm submit NAME.
. "$(dirname "$0")/rtlib.sh"
keygen
# Heartbeats far apart: what hrm nodes shows cannot come from them.
start_master --node-timeout 600s
start_agent n1 --cpus 4 --mem 4G --heartbeat 300s
until_ok 60 nodes_up 1 || fail "node did not register"

# hrm submit NAME (no --) when NAME is no file: how to run a command, not a JSON parser's error.
expect_exit 2 "$HRM" submit true
grep -qx "hrm submit: true: no such job file; to run a command use: hrm submit -- true" "$TMP/err" \
  || { cat "$TMP/err" >&2; fail "submit true: message"; }

# Runtime (end - start) of a single-process task is at least its CPU time.
for k in $(seq 8); do
  id=$("$HRM" submit --cpus 0.5 -- true) || fail "submit true"
  expect_exit 0 timeout 60 "$HRM" wait "$id"
  "$HRM" job "$id" --json >"$TMP/t.json"
  python3 - "$TMP/t.json" <<'P' || fail "job $id: runtime below cpu time"
import json, sys
t = json.load(open(sys.argv[1]))["tasks"][0]
run = t["end_us"] - t["start_us"]
if t["cpu_us"] <= 0 or run < t["cpu_us"]:
    print("runtime %d us, cpu %d us" % (run, t["cpu_us"]), file=sys.stderr)
    sys.exit(1)
P
done

# hrm nodes: running tasks while they run, none once the job has ended.
node_tasks() { [ "$("$HRM" nodes --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["tasks"])')" = "$1" ]; }
w=$("$HRM" submit --count 2 --cpus 1 -- sh -c "touch '$TMP/go-'\$HRM_TASK_ID; while [ ! -e '$TMP/stop' ]; do sleep 0.05; done") \
  || fail "submit w"
until_ok 60 test -e "$TMP/go-0" -a -e "$TMP/go-1" || fail "w did not start"
# A running job: no exit yet ("-", JSON null), in hrm job, hrm jobs and their JSON.
"$HRM" job "$w" >"$TMP/wj"
grep -q "^state running  exit -  tasks 2:" "$TMP/wj" || { cat "$TMP/wj" >&2; fail "running job shows an exit"; }
grep -Eq "^ +0  running +1 n1 +- +- +- +[0-9.]+\/[0-9]+M +- +[0-9.]+\/[0-9]+M *$" "$TMP/wj" || { cat "$TMP/wj" >&2; fail "running task shows an exit"; }
"$HRM" job "$w" --json | python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["exit"] is not None)' \
  || fail "running job: JSON exit is not null"
"$HRM" jobs | awk -v id="$w" '$1 == id && $5 == "running" && $9 == "-" { f = 1 } END { exit !f }' \
  || { "$HRM" jobs >&2; fail "hrm jobs: running job shows an exit"; }
node_tasks 2 || { "$HRM" nodes >&2; fail "hrm nodes: not 2 tasks while w runs"; }
touch "$TMP/stop"
expect_exit 0 timeout 60 "$HRM" wait "$w"
node_tasks 0 || { "$HRM" nodes >&2; fail "hrm nodes: tasks left after w ended"; }
"$HRM" job "$w" | matches "^state done  exit 0  tasks 2:" || fail "ended job: exit 0 not shown"

# A job of 2,500 tasks, 1 running (it takes the node's 4 cpus): the listing says what it leaves out.
big=$("$HRM" submit --count 2500 --cpus 4 --no-output -- sleep 600) || fail "submit big"
until_ok 60 started "$big" 1 || fail "big did not start"
"$HRM" job "$big" >"$TMP/big"
grep -qx "showing 2,000 of 2,500 tasks; --all / --tasks A:B / --task-state S to see others" "$TMP/big" \
  || { tail -3 "$TMP/big" >&2; fail "partial list not announced"; }
[ "$(grep -cE '^ +[0-9]+  (running|pending) ' "$TMP/big")" -eq 2000 ] || fail "first page is not 2,000 tasks"
"$HRM" job "$big" --all >"$TMP/all"
[ "$(grep -cE '^ +[0-9]+  (running|pending) ' "$TMP/all")" -eq 2500 ] || fail "--all: not 2,500 tasks"
grep -q "^showing" "$TMP/all" && fail "--all still says it shows a part"
"$HRM" job "$big" --tasks 2497:2500 >"$TMP/range"
[ "$(grep -cE '^ +249[789]  pending ' "$TMP/range")" -eq 3 ] || { cat "$TMP/range" >&2; fail "--tasks 2497:2500"; }
"$HRM" job "$big" --task-state running >"$TMP/run"
[ "$(grep -cE '^ +[0-9]+  running ' "$TMP/run")" -eq 1 ] && ! grep -qE '^ +[0-9]+  pending ' "$TMP/run" \
  || { cat "$TMP/run" >&2; fail "--task-state running"; }
expect_exit 2 "$HRM" job "$big" --tasks 5:2
grep -q -- "--tasks" "$TMP/err" || fail "bad --tasks not named"
expect_exit 2 "$HRM" job "$big" --task-state sleeping
grep -q "not a task state" "$TMP/err" || { cat "$TMP/err" >&2; fail "bad --task-state"; }

# Cancelled jobs count in the summary; --summary --json is the summary, not the job list.
expect_exit 0 "$HRM" cancel "$big"
expect_exit 143 timeout 60 "$HRM" wait "$big"
"$HRM" jobs --summary >"$TMP/sum"
grep -qx "jobs      10 (9 done, 0 failed, 1 cancelled)" "$TMP/sum" || { cat "$TMP/sum" >&2; fail "summary: jobs"; }
grep -qx "tasks     2510: 10 done, 0 failed, 0 skipped, 2500 cancelled" "$TMP/sum" \
  || { cat "$TMP/sum" >&2; fail "summary: tasks"; }
"$HRM" jobs --summary --json >"$TMP/sum.json"
python3 - "$TMP/sum.json" <<'P' || { cat "$TMP/sum.json" >&2; fail "summary --json"; }
import json, sys
s = json.load(open(sys.argv[1]))
assert isinstance(s, dict), "not an object"
assert (s["jobs"], s["jobs_done"], s["jobs_cancelled"]) == (10, 9, 1), s
assert (s["tasks"], s["tasks_done"], s["tasks_cancelled"]) == (2510, 10, 2500), s
P
node_tasks 0 || { "$HRM" nodes >&2; fail "hrm nodes: tasks left after big was cancelled"; }
exit 0
