# A process of 300 simulated agents under a descriptor limit that holds 3 per agent but not the 5 that watching each agent's connection takes: the agents run without watching (a warning says so and why), all register, and after a master restart they register again when told not_registered; under a limit that holds 5 the warning does not appear.
. "$(dirname "$0")/rtlib.sh"
N=300
keygen
"$HRM" keygen --node f --node-count $N "$S/keys" >/dev/null || fail "keygen --node-count"
start_master --reconcile 120s --node-timeout 600s
(ulimit -n 1500 && exec "$HRM" agent --state "$S" --simulate-exec --count $N --name-prefix f \
  --cpus 1 --mem 1G --log-level info) >>"$TMP/fleet.log" 2>&1 &
PIDS+=("$!")
until_ok 120 nodes_up $N || fail "not all $N agents registered under the lower limit"
grep -q "the agents do without watching their connection" "$TMP/fleet.log" ||
  fail "no warning that the agents do not watch their connection"
kill -KILL "$MASTER"; wait "$MASTER" 2>/dev/null || true
start_master --reconcile 120s --node-timeout 600s
registrations() { [ "$(grep -c ' registered; ' "$TMP/master.log")" -ge "$1" ]; }
until_ok 120 registrations $((2 * N)) || fail "not all agents registered again"
dropped=$(grep -c "connection to the master dropped" "$TMP/fleet.log" || true)
[ "$dropped" -eq 0 ] || fail "$dropped unwatched agents said their connection dropped"
# Enough descriptors: no warning.
"$HRM" keygen --node g --node-count 10 "$S/keys" >/dev/null || fail "keygen g"
(ulimit -n 1500 && exec "$HRM" agent --state "$S" --simulate-exec --count 10 --name-prefix g \
  --cpus 1 --mem 1G --log-level info) >>"$TMP/g.log" 2>&1 &
PIDS+=("$!")
until_ok 120 nodes_up $((N + 10)) || fail "the 10 agents of the second process did not register"
! grep -q "do without watching" "$TMP/g.log" || fail "a warning although the limit holds 5 per agent"
echo ok
