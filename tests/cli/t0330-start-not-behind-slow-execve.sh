#!/usr/bin/env bash
# On the central path a task's start does not wait behind another task's execve: the agent's
# launcher clones each child and goes on to the next launch while the child is still on its way
# to its execve (docs/runtime.md, "What the agent does with a task").  Task b's execve is held
# by a write lease on its program (rtlib.sh, lease_hold); tasks c, submitted after it, must start,
# run and end while it is held, and b must still run once its execve goes on.  (A cancel that
# comes while a task's execve is held: t0329.)
. "$(dirname "$0")/rtlib.sh"
need timeout
keygen
start_master
start_agent n1 --cpus 4 --mem 2G --no-cgroup
until_ok 60 nodes_up 1 || fail "node did not register"
lease_hold slow "$(command -v sleep)"
b=$("$HRM" submit --cpus 1 -- "$TMP/slow" 0) || fail "submit b"
until_ok 60 test -e "$TMP/slow.waiting" || fail "job $b's execve did not wait on the lease"
c=$("$HRM" submit --count 6 --cpus 1 -- sh -c 'echo "c-$HRM_TASK_ID"') || fail "submit c"
# Well under the lease's 45 s: held behind b's execve, c would end only when the kernel breaks it.
until_ok 20 job_state "$c" done || fail "job $c did not run while job $b's execve was held: $("$HRM" job "$c")"
for i in 0 1 2 3 4 5; do
  [ "$("$HRM" logs "$c" --task "$i")" = "c-$i" ] || fail "job $c task $i's output"
done
job_state "$b" running || fail "job $b is not running while its execve is held: $("$HRM" job "$b")"
test ! -e "$TMP/slow.go" || fail "the lease was let go early"
touch "$TMP/slow.go"
expect_exit 0 timeout 120 "$HRM" wait "$b"

echo ok
