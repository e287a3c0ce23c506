# An agent goes on with its work while a task it starts has not reached its execve: it reports
# another task's end and answers a scheduler's probes, a cancel that comes meanwhile still kills
# the task once it runs, and every task runs once (docs/runtime.md, "What the agent does with a
# task").  The slow start is made, not waited for: the task's program is a copy of sleep on
# which a helper holds a write lease, so the kernel holds the task's execve until the helper
# lets go, and tells the helper when it begins to wait (SIGIO).
. "$(dirname "$0")/rtlib.sh"
need timeout
keygen
mkfifo "$TMP/fifo"

# 1. A task's end is reported while the next task's start waits in its execve.
start_master
start_agent n1 --cpus 2 --mem 2G --no-cgroup
until_ok 60 nodes_up 1 || fail "node did not register"
a=$("$HRM" submit --cpus 1 -- sh -c "read x < '$TMP/fifo'") || fail "submit a"
until_ok 60 started "$a" 1 || fail "job $a did not start"
lease_hold slow1 "$(command -v sleep)"
b=$("$HRM" submit --cpus 1 -- "$TMP/slow1" 0) || fail "submit b"
until_ok 60 test -e "$TMP/slow1.waiting" || fail "job $b's execve did not wait on the lease"
expect_exit 0 timeout 20 sh -c "echo go > '$TMP/fifo'"
until_ok 30 job_state "$a" done || fail "job $a's end was not reported while job $b's task was starting"
test ! -e "$TMP/slow1.go" || fail "the lease was let go early"
touch "$TMP/slow1.go"
expect_exit 0 timeout 120 "$HRM" wait "$b"

# 2. A cancel that comes while the task is starting kills it once it runs: the whole group.
# A script (its execve opens it too): a child in the task's group, and the task itself.
printf '#!/bin/sh\nsleep 3017 &\nexec sleep 3018\n' >"$TMP/group.sh"
lease_hold slow2 "$TMP/group.sh"
c=$("$HRM" submit --cpus 1 -- "$TMP/slow2") || fail "submit c"
until_ok 60 test -e "$TMP/slow2.waiting" || fail "job $c's execve did not wait on the lease"
"$HRM" cancel "$c" >/dev/null || fail "cancel $c"
touch "$TMP/slow2.go"
until_ok 60 job_state "$c" cancelled || fail "job $c was not cancelled: $("$HRM" job "$c")"
until_ok 60 no_process -f "^sleep 301[78]$" || fail "job $c's processes outlived its cancel"
rt_cleanup
PIDS=()

# 3. Probes are answered while a task's start waits in its execve (execution queues).
S="$TMP/state2"
export HRM_STATE="$S"
keygen
start_master --policy dhrm-nego --trace "$TMP/trace"
start_agent n2 --cpus 2 --mem 2G --no-cgroup
until_ok 60 nodes_up 1 || fail "node did not register (dhrm-nego)"
lease_hold slow3 "$(command -v sleep)"
d=$("$HRM" submit --cpus 1 -- "$TMP/slow3" 0) || fail "submit d"
until_ok 60 test -e "$TMP/slow3.waiting" || fail "job $d's execve did not wait on the lease"
# Its run line follows its probe's reply in the trace: every reply before the wait is written.
until_ok 60 grep -q " run $d " "$TMP/trace" || fail "job $d's run is not in the trace"
replies() { grep -c " reply " "$TMP/trace" || true; }
before=$(replies)
e=$("$HRM" submit --cpus 1 -- true) || fail "submit e"
more_replies() { [ "$(replies)" -gt "$before" ]; }
until_ok 30 more_replies || fail "no probe of job $e answered while job $d's task was starting"
test ! -e "$TMP/slow3.go" || fail "the lease was let go early"
touch "$TMP/slow3.go"
expect_exit 0 timeout 120 "$HRM" wait "$d"
expect_exit 0 timeout 120 "$HRM" wait "$e"
echo ok
