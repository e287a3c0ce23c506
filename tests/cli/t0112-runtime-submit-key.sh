# Idempotent submission: a master that dies after committing a job and before replying leaves "unknown" (exit 3), and a retry with the key gives the same job, never a second one.
. "$(dirname "$0")/rtlib.sh"
keygen
# Test-only hook: the master dies (SIGKILL) right after committing a turn that accepted a job.
HRM_TEST_CRASH_AFTER_COMMIT=submit start_master
start_agent n1 --cpus 2 --mem 1G
until_ok 60 nodes_up 1 || fail "agent did not register"

# 1. No answer: its own message and exit code, with the key to retry with.
expect_exit 3 "$HRM" submit --timeout 10 --name first -- true
grep -q "may or may not have been submitted" "$TMP/err" || fail "message: $(cat "$TMP/err")"
key=$(sed -n 's/.*--key \([0-9a-f]*\).*/\1/p' "$TMP/err")
[ "${#key}" -eq 32 ] || fail "no 128-bit key in: $(cat "$TMP/err")"
until_ok 60 sh -c "! kill -0 $MASTER" || fail "the master did not die after the commit"
grep -q "dying after the commit" "$TMP/master.log" || fail "the hook did not fire"

# The job was committed: a retry with the key answers with its id, and makes no second job.
start_master
id=$("$HRM" submit --key "$key" --name first -- true) || fail "retry with --key"
[ "$id" = 1 ] || fail "the retry got job $id, not job 1"
id=$("$HRM" submit --key "$key" --name first -- true) || fail "second retry"
[ "$id" = 1 ] || fail "the second retry got job $id"
count_jobs() {
  "$HRM" jobs --all --json | python3 -c 'import json, sys
d = json.load(sys.stdin); jobs = d["jobs"] if isinstance(d, dict) else d
print(len(jobs))'
}
[ "$(count_jobs)" = 1 ] || fail "$(count_jobs) jobs after two retries of one submission"
# A new submission (a fresh key) is a new job.
id=$("$HRM" submit -- true) || fail "plain submit"
[ "$id" = 2 ] || fail "a new submission got $id"

# 2. The client retries by itself with the same key: the master dies after the
# commit, comes back, and the client's resend gets the job it made.
kill -TERM "$MASTER"; until_ok 60 sh -c "! kill -0 $MASTER" || fail "master did not stop"
HRM_TEST_CRASH_AFTER_COMMIT=submit start_master
"$HRM" submit --timeout 120 --name auto -- true >"$TMP/auto.out" 2>"$TMP/auto.err" &
client=$!; PIDS+=("$client")
crashed() { [ "$(grep -c "dying after the commit" "$TMP/master.log")" -ge 2 ]; }
until_ok 60 crashed || fail "the master did not die after the second commit"
until_ok 60 sh -c "! kill -0 $MASTER" || fail "the crashed master still runs"
start_master
wait "$client" || fail "the retrying client failed: $(cat "$TMP/auto.err")"
[ "$(cat "$TMP/auto.out")" = 3 ] || fail "the retrying client got '$(cat "$TMP/auto.out")', not job 3"
[ "$(count_jobs)" = 3 ] || fail "$(count_jobs) jobs, expected 3"

# A malformed key is bad usage, before anything is sent.
expect_exit 2 "$HRM" submit --key 'a b' -- true
grep -q -- "--key" "$TMP/err" || fail "bad key not named"
