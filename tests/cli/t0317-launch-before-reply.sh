# The master sends a turn's launches to the agents before its replies to clients: the launch of a
# job just accepted does not wait while the client's acknowledgement wakes the client's threads.
# Its debug log says so for every turn that sent both (docs/runtime.md, "State folder and
# durability").  Each submission below is accepted and placed in one turn (one commit), so that
# turn sends the agent's launch and the client's acknowledgement.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --log-level debug
start_agent n1 --cpus 2 --mem 2G --no-cgroup
until_ok 60 nodes_up 1 || fail "node did not register"
mkdir -p "$TMP/runs"
for i in 1 2 3; do
  job=$("$HRM" submit -- sh -c "echo x >> '$TMP/runs/r-$i'") || fail "submit $i"
  until_ok 60 test -s "$TMP/runs/r-$i" || fail "job $job did not run"
done
ran_once r 3 "the jobs"
n=$(grep -c "sent 1 agent batch, then 1 client message" "$TMP/master.log" || true)
[ "$n" -ge 3 ] || fail "the master logged $n turns sending a launch before a reply, not 3 or more"
echo ok
