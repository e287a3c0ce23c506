# An agent whose registration was answered starts over at the first retry interval when the master restarts soon after: the wait before it sends an unanswered registration again doubles only while the master does not answer (the agent's debug log says the wait it chose).
. "$(dirname "$0")/rtlib.sh"
keygen
"$HRM" keygen --node f --node-count 2 "$S/keys" >/dev/null || fail "keygen --node-count"
start_master --reconcile 60s
"$HRM" agent --state "$S" --simulate-exec --count 2 --name-prefix f --cpus 1 --mem 1G --log-level debug >>"$TMP/fleet.log" 2>&1 &
PIDS+=("$!")
until_ok 60 nodes_up 2 || fail "the agents did not register"
first=$(grep -c "registration sent" "$TMP/fleet.log")
[ "$first" -ge 2 ] || fail "no registration logged"
grep "f1: registration sent" "$TMP/fleet.log" | head -1 | grep -q "(retry 3 s)" ||
  fail "the first registration's retry is not the base interval"
# The master restarts at once: the agents' registrations were answered seconds ago.
kill -KILL "$MASTER"; wait "$MASTER" 2>/dev/null || true
start_master --reconcile 60s
registrations() { [ "$(grep -c ' registered; ' "$TMP/master.log")" -ge "$1" ]; }
until_ok 60 registrations 4 || fail "the agents did not register again"
grep "f1: registration sent" "$TMP/fleet.log" | sed -n 2p | grep -q "(retry 3 s)" ||
  fail "after an answered registration the backoff carried over: $(grep 'f1: registration sent' "$TMP/fleet.log" | tail -1)"
grep "f2: registration sent" "$TMP/fleet.log" | sed -n 2p | grep -q "(retry 3 s)" ||
  fail "f2: the backoff carried over"
echo ok
