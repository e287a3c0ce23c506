# GET /metrics under dhrm-nego: the negotiator's moves are counted (as many as task_migrated events), and tasks placed in nodes' queues are scheduling decisions.
. "$(dirname "$0")/rtlib.sh"
. "$(dirname "$0")/metrics-lib.sh"
metrics_up 3 --cpus 2 --mem 2G --policy dhrm-nego --param instances=3 --param hw_ms=50
# As t0106: one node is held by a long task while tasks queue behind it and the others go idle,
# so the negotiator moves some away.  The long task ends once something has moved.
long=$("$HRM" submit --cpus 2 -- sh -c "while [ ! -e $TMP/long-go ]; do sleep 0.05; done") || fail "submit long"
until_ok 60 started "$long" 1 || fail "long never started"
mv=$("$HRM" submit --count 12 --cpus 1 -- sleep 0.2) || fail "submit mv"
migrated() { "$HRM" events --json | grep -c '"kind": *"task_migrated"' || true; }
until_ok 120 sh -c "[ \$(\"$HRM\" events --json | grep -c '\"kind\": *\"task_migrated\"') -ge 1 ]" ||
  fail "the negotiator moved no task"
touch "$TMP/long-go"
expect_exit 0 timeout 120 "$HRM" wait "$mv"
expect_exit 0 timeout 120 "$HRM" wait "$long"
scrape "$TMP/m"
moves=$(migrated)
is "$TMP/m" hrm_negotiator_moves_total "$moves" ||
  fail "hrm_negotiator_moves_total is $(value "$TMP/m" hrm_negotiator_moves_total), the event log has $moves task_migrated"
dec=$(value "$TMP/m" hrm_sched_decisions_total)
[ "$dec" != none ] && [ "$dec" -ge 13 ] || fail "decisions: $dec, 13 tasks were placed"
is "$TMP/m" 'hrm_tasks{state="done"}' 13 || fail "done tasks"
is "$TMP/m" 'hrm_tasks{state="queued"}' 0 || fail "queued tasks left"
