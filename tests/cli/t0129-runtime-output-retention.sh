# hrm agent --output-retention removes the output of jobs that ended longer ago, never the output of a task that still runs.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2 --output-retention 2s
until_ok 60 nodes_up 1 || fail "the node did not register"
dir() { echo "$S/agents/n1/$1"; }

# A task that writes a line and then runs, silent, until the test lets it end.
l=$("$HRM" submit -- sh -c "echo live-line; while [ ! -e '$TMP/go' ]; do sleep 0.1; done") || fail "submit l"
until_ok 60 grep -q live-line "$(dir "$l")/0.out" || fail "the live task did not write"
# A job that ends after the live task's last write: once its output is removed, the live
# task's output was older still, and only the task running kept it.
e=$("$HRM" submit -- echo ended-line) || fail "submit e"
expect_exit 0 timeout 60 "$HRM" wait "$e"
until_ok 60 test ! -e "$(dir "$e")" || fail "the ended job's output was not removed"
[ -d "$(dir "$l")" ] || fail "the output of a task that still runs was removed"
[ "$(timeout 60 "$HRM" logs "$l")" = live-line ] || fail "the live task's output is not readable"
expect_exit 1 timeout 60 "$HRM" logs "$e"
grep -q "output-retention" "$TMP/err" || fail "reading removed output does not say why it is gone"
grep -q "output of job $e removed" "$TMP/n1.log" || fail "the agent did not log the removal"

touch "$TMP/go"
expect_exit 0 timeout 60 "$HRM" wait "$l"
until_ok 60 test ! -e "$(dir "$l")" || fail "the output of the job that ended last was not removed"

expect_exit 2 "$HRM" agent --output-retention soon
grep -q -- "--output-retention" "$TMP/err" || fail "a bad retention is not refused by name"
