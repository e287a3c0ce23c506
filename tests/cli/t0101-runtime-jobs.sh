# The vertical slice: keygen, master, 2 agents; 200 tasks with the right exit codes and captured output; logs, cancel, jobs.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 4 --mem 4G --rack r1
start_agent n2 --cpus 4 --mem 4G --rack r2
until_ok 60 nodes_up 2 || fail "nodes did not register"

cat >"$TMP/a.json" <<'J'
{"name": "trues", "tasks": [{"cmd": ["true"], "count": 100, "cpus": "250m"}]}
J
cat >"$TMP/b.json" <<'J'
{"name": "echoes", "tasks": [{"cmd": "echo out-$HRM_TASK_ID; echo err-$HRM_TASK_ID >&2", "count": 90, "cpus": "250m", "mem": "64M"}]}
J
a=$("$HRM" submit "$TMP/a.json") || fail "submit a"
b=$("$HRM" submit "$TMP/b.json") || fail "submit b"
fails=()
for i in $(seq 10); do fails+=("$("$HRM" submit --name three -- sh -c 'exit 3')") || fail "submit exit-3"; done
expect_exit 0 timeout 120 "$HRM" wait "$a"
expect_exit 0 timeout 120 "$HRM" wait "$b"
for id in "${fails[@]}"; do expect_exit 3 timeout 120 "$HRM" wait "$id"; done

"$HRM" job "$a" --json >"$TMP/a.out"
grep -q '"done": 100' "$TMP/a.out" || fail "job a: not 100 done"
"$HRM" job "$b" --json >"$TMP/b.out"
grep -q '"done": 90' "$TMP/b.out" || fail "job b: not 90 done"
for t in 0 17 89; do
  [ "$("$HRM" logs "$b" --task $t)" = "out-$t" ] || fail "stdout of task $t"
  [ "$("$HRM" logs "$b" --task $t --err)" = "err-$t" ] || fail "stderr of task $t"
done
"$HRM" jobs --summary >"$TMP/sum"
grep -q "tasks     200: 190 done, 10 failed" "$TMP/sum" || { cat "$TMP/sum" >&2; fail "summary"; }

# --no-output: the task runs and nothing is written for it.
q=$("$HRM" submit --no-output -- sh -c 'echo hidden') || fail "submit --no-output"
expect_exit 0 timeout 120 "$HRM" wait "$q"
[ ! -e "$S/agents/n1/$q" ] && [ ! -e "$S/agents/n2/$q" ] || fail "output written with --no-output"
echo '{"tasks": [{"cmd": ["true"], "output": "no"}]}' >"$TMP/badout.json"
expect_exit 2 "$HRM" submit "$TMP/badout.json"
grep -q "tasks\[0\].output" "$TMP/err" || fail "bad output field not named"

# A command that cannot start: exit 127, the job fails.
bad=$("$HRM" submit -- /nonexistent/prog) || fail "submit bad prog"
expect_exit 127 timeout 120 "$HRM" wait "$bad"

# Cancel stops a running task.
long=$("$HRM" submit --count 2 -- sleep 60.123) || fail "submit long"
until_ok 60 sh -c "'$HRM' job $long --json | grep -q '\"running\": 2'" || fail "long job never ran"
expect_exit 0 "$HRM" cancel "$long"
expect_exit 143 timeout 120 "$HRM" wait "$long"
until_ok 60 no_process -fx 'sleep 60.123' || fail "sleep survived cancel"

# Bad input: clear messages, exit 2; unknown job: exit 1.
echo '{"tasks": [{"cmd": []}]}' >"$TMP/bad.json"
expect_exit 2 "$HRM" submit "$TMP/bad.json"
grep -q "tasks\[0\].cmd" "$TMP/err" || fail "bad spec not named"
expect_exit 2 "$HRM" submit --cpus lots -- true
expect_exit 2 "$HRM" submit --cpus 64 -- true
grep -q "more than any node" "$TMP/err" || fail "oversized request"
expect_exit 1 "$HRM" job 99999
grep -q "no job 99999" "$TMP/err" || fail "unknown job"
expect_exit 0 "$HRM" nodes
grep -q "n1" "$TMP/out" || fail "nodes listing"
