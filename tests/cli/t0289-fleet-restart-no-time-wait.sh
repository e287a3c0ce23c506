# 200 simulated agents connected, the master killed (SIGKILL): its connections close with a reset, so none waits in TIME_WAIT on the master's port (before, one per agent: a reconnection from a port whose old connection was still there had its SYN answered with that connection's ACK, and waited a second for its SYN's retransmission); then the master restarted: every agent back, each registered once.
. "$(dirname "$0")/rtlib.sh"
need ss
N=200
keygen
start_master --reconcile 120s --node-timeout 600s
port=$(sed 's/.*://' "$S/endpoint")
[ -n "$port" ] || fail "no endpoint"
start_fleet $N f --cpus 1 --mem 1G --log-level info
job=$("$HRM" submit --count $N --cpus 1 -- sleep 3600) || fail "submit"
until_ok 120 started "$job" $N || fail "not every task started"
established() { ss -Htn state established "( sport = :$port )" | wc -l; }
[ "$(established)" -ge $N ] || fail "$(established) connections on the master's port for $N agents"

kill -KILL "$MASTER"; wait "$MASTER" 2>/dev/null || true
dropped() { [ "$(grep -c "connection to the master dropped" "$TMP/fleet.log" || true)" -ge $N ]; }
until_ok 60 dropped || fail "the agents did not all notice the master's end"
# The agents close their side once they notice; a FIN from the master leaves its side in
# TIME_WAIT from that moment (closing, until the agent's FIN).
closed() { [ "$(ss -Htn "( sport = :$port )" | grep -vc '^TIME-WAIT' || true)" -eq 0 ]; }
until_ok 60 closed || fail "connections on the master's port still open: $(ss -Htn "( sport = :$port )" | head -3)"
waiting=$(ss -Htn state time-wait "( sport = :$port )" | wc -l)
[ "$waiting" -eq 0 ] || fail "$waiting of the killed master's $N agent connections wait in TIME_WAIT"

start_master --reconcile 120s --node-timeout 600s
reconciled_all $N "$job"
echo ok
