# The master and a fleet of simulated agents each run two ZeroMQ I/O threads per CPU (up to 4), so the CURVE handshakes and encryption of thousands of agents' connections are not all on one core, and a burst of them is not all on a thread that is behind; one agent and the CLI keep one.
. "$(dirname "$0")/rtlib.sh"
need nproc
cpus=$(nproc); want=$(( 2 * cpus > 4 ? 4 : 2 * cpus ))
io_threads() { grep -l "^ZMQbg/IO/" /proc/"$1"/task/*/comm 2>/dev/null | wc -l; }
keygen
"$HRM" keygen --node f --node-count 20 "$S/keys" >/dev/null || fail "keygen --node-count"
start_master
"$HRM" agent --state "$S" --simulate-exec --count 20 --name-prefix f --cpus 1 --mem 1G \
  --log-level warning >>"$TMP/fleet.log" 2>&1 &
FLEET=$!; PIDS+=("$FLEET")
until_ok 60 nodes_up 20 || fail "the agents did not register"
[ "$(io_threads "$MASTER")" -eq "$want" ] || fail "the master runs $(io_threads "$MASTER") I/O threads, not $want"
[ "$(io_threads "$FLEET")" -eq "$want" ] || fail "the fleet runs $(io_threads "$FLEET") I/O threads, not $want"
expect_exit 0 "$HRM" jobs
echo ok
