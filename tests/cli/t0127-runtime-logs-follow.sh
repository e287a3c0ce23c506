# hrm logs --follow prints output that appears after it started, ends when the task ends and exits with the task's code; it waits for a task not started yet and follows a task whose node died to its next attempt.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --node-timeout 2s
start_agent n1 --cpus 1
until_ok 60 nodes_up 1 || fail "the node did not register"

# The task writes a line, waits for the test's go-ahead, writes another and fails with 3.
j=$("$HRM" submit -- sh -c "echo first-line; while [ ! -e '$TMP/go' ]; do sleep 0.1; done; echo second-line; exit 3") ||
  fail "submit"
timeout 120 "$HRM" logs "$j" --follow >"$TMP/follow" 2>"$TMP/follow.err" &
follower=$!
PIDS+=("$follower")
until_ok 60 grep -q first-line "$TMP/follow" || fail "--follow did not print the first line"
grep -q second-line "$TMP/follow" && fail "the second line came before it was written"
kill -0 "$follower" 2>/dev/null || fail "--follow ended while the task runs"
touch "$TMP/go"
set +e; wait "$follower"; code=$?; set -e
[ "$code" -eq 3 ] || { cat "$TMP/follow.err" >&2; fail "--follow exited $code, not the task's 3"; }
printf 'first-line\nsecond-line\n' | cmp - "$TMP/follow" || fail "--follow printed other output"
grep -q "task $j.0 failed (exit 3)" "$TMP/follow.err" || fail "--follow did not say how the task ended"

# A task that has not started yet: --follow waits for it; a plain read says so.
"$HRM" submit --cpus 1 -- sh -c "while [ ! -e '$TMP/go2' ]; do sleep 0.1; done" >"$TMP/blocker" || fail "submit blocker"
b=$(cat "$TMP/blocker")
until_ok 60 started "$b" 1 || fail "the blocker did not start"
k=$("$HRM" submit --cpus 1 -- echo late-line) || fail "submit k"
expect_exit 1 timeout 60 "$HRM" logs "$k"
grep -q "has not started yet" "$TMP/err" || fail "reading a pending task's output does not say why it fails"
timeout 120 "$HRM" logs "$k" --follow >"$TMP/follow2" 2>"$TMP/follow2.err" &
follower=$!
PIDS+=("$follower")
touch "$TMP/go2"
set +e; wait "$follower"; code=$?; set -e
[ "$code" -eq 0 ] || { cat "$TMP/follow2.err" >&2; fail "--follow of a pending task exited $code"; }
grep -qx late-line "$TMP/follow2" || fail "--follow of a pending task missed its output"

# The node dies under a follower: it waits, and follows the task's next attempt elsewhere.
f=$("$HRM" submit -- sh -c "echo attempt-\$HRM_ATTEMPT; while [ ! -e '$TMP/go3' ]; do sleep 0.1; done; echo last-line") ||
  fail "submit f"
timeout 120 "$HRM" logs "$f" --follow >"$TMP/follow3" 2>"$TMP/follow3.err" &
follower=$!
PIDS+=("$follower")
until_ok 60 grep -q attempt-1 "$TMP/follow3" || fail "--follow did not print the first attempt's line"
kill -KILL "$AGENT_n1"
start_agent n2 --cpus 1
until_ok 60 grep -q attempt-2 "$TMP/follow3" || { cat "$TMP/follow3.err" >&2; fail "--follow did not follow the second attempt"; }
touch "$TMP/go3"
set +e; wait "$follower"; code=$?; set -e
[ "$code" -eq 0 ] || { cat "$TMP/follow3.err" >&2; fail "--follow across a node's death exited $code"; }
printf 'attempt-1\nattempt-2\nlast-line\n' | cmp - "$TMP/follow3" || fail "--follow across a node's death printed other output"
grep -q "runs again (attempt 2)" "$TMP/follow3.err" || fail "--follow did not say the task runs again"
