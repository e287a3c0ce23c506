# hrm up --nodes 4 runs a cluster, a command against it, then stops everything; 1,000 tasks complete.
. "$(dirname "$0")/lib.sh"
cat >"$TMP/run.sh" <<'X'
set -e
id=$("$HRM" submit --count 1000 --cpus 100m -- sh -c 'echo t$HRM_TASK_ID')
timeout 240 "$HRM" wait "$id"
"$HRM" job "$id" --json | grep '"done": 1000' >/dev/null
[ "$("$HRM" logs "$id" --task 999)" = "t999" ]
"$HRM" nodes --json | grep -c '"state": "up"' | grep -x 4 >/dev/null
X
timeout 300 "$HRM" up --nodes 4 --cpus 2 --state "$TMP/st" -- bash "$TMP/run.sh" >"$TMP/out" 2>"$TMP/err" \
  || { cat "$TMP/err" "$TMP/st/logs/master.log" >&2; fail "hrm up run failed"; }
grep -q "4 nodes" "$TMP/err" || fail "no startup line"
# Everything stopped: no daemon of this state folder is left.
no_process -f "state $TMP/st" || fail "daemons left behind"
expect_exit 2 timeout 60 "$HRM" up --nodes 0
expect_exit 0 timeout 60 "$HRM" up --help
