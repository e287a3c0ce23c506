# A node's execution queues start the next task the moment a task's end frees its slot, and that launch blocks the agent until the task's execve: the end's report leaves before it (the agent counts such flushes and says so when it stops), and every task still runs once.
. "$(dirname "$0")/rtlib.sh"
need timeout
keygen
start_master --policy dhrm-nego
start_agent n1 --cpus 1
until_ok 60 nodes_up 1 || fail "the agent did not register"
mkdir -p "$TMP/runs"
# One slot, four tasks: they queue on the node and each end starts the next there.
j=$("$HRM" submit --count 4 --cpus 1 -- sh -c "echo x >> $TMP/runs/e-\$HRM_TASK_ID; sleep 0.2") \
  || fail "submit"
expect_exit 0 timeout 120 "$HRM" wait "$j"
ran_once e 4 "the job"
kill -TERM "$AGENT_n1"; wait "$AGENT_n1" 2>/dev/null || true
k=$(sed -n 's/.*task ends reported ahead of the launches they freed slots for: \([0-9]*\) times.*/\1/p' "$TMP/n1.log")
[ -n "$k" ] || fail "the agent did not count its ends reported ahead: $(tail -3 "$TMP/n1.log")"
[ "$k" -ge 1 ] || fail "no task end was reported ahead of the launch it freed a slot for ($k)"
