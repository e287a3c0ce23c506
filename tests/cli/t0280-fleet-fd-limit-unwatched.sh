# A process of 300 simulated agents under a descriptor limit that holds 3 per agent but not the 5 that watching each agent's connection takes: the agents run without watching (a warning says so and why), all register, and after a master restart they register again when told not_registered; under a limit that holds 5 the warning does not appear.  hrm bench fleet spreads its agents over processes of --per-process (so that 5,000 fit a limit of 20,000), named f1.. and f2-1..
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

# The bench: 20 agents in processes of 10; more than 40 processes is refused.
timeout -k 10 500 "$HRM" bench fleet --agents 20 --per-process 10 --cpus 2 --tasks 200 \
  --per-job 100 --no-reconcile --state "$TMP/bench" >"$TMP/bench.out" 2>&1 ||
  { cat "$TMP/bench.out" >&2; fail "bench fleet --per-process 10 failed"; }
grep -q "BENCH fleet.register_s" "$TMP/bench.out" || fail "no registration figure"
for n in f10 f2-10; do
  grep -q "node $n (rack" "$TMP/bench/master.log" || fail "agent $n of the bench did not register"
done
expect_exit 2 "$HRM" bench fleet --agents 100 --per-process 2
out=$("$HRM" bench fleet --agents 100 --per-process 2 2>&1 || true)
echo "$out" | matches "more than 40 processes" || fail "too many processes: no reason given: $out"
"$HRM" bench fleet --help | matches -- "--per-process N" || fail "--help does not document --per-process"
echo ok
