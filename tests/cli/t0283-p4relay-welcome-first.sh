# Nothing the master relays before its commit overtakes a node's welcome: with the instances in the master and a job waiting for nodes, the agent that registers is probed in the very turn of its registration, and that probe reaches it after its welcome (it has its execution queues to answer it), so no probe is dropped and the job runs without a round timing out.
. "$(dirname "$0")/rtlib.sh"
need timeout
keygen
start_master --policy dhrm-batch --param instances=1 --trace "$TMP/trace"
j=$("$HRM" submit --count 3 --cpus 1 -- true) || fail "submit"
start_agent n1 --cpus 2
until_ok 60 nodes_up 1 || fail "the agent did not register"
expect_exit 0 timeout 120 "$HRM" wait "$j"
grep -q "runs no execution queues" "$TMP/n1.log" \
  && fail "a probe reached the agent before its welcome: $(grep 'runs no execution queues' "$TMP/n1.log" | head -3)"
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true
grep -q " probe " "$TMP/trace" || fail "no probe was relayed: $(head -20 "$TMP/trace")"
exit 0
