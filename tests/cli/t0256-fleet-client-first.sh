# While 300 simulated agents flood the master (a heartbeat and a usage report every 20 ms each), a client's request is answered ahead of the agents' messages waiting before it: the master is stopped (SIGSTOP) until megabytes of agents' messages wait in its sockets, `hrm jobs` is asked, the master resumes; the answer comes while agent messages still wait (the master's log says how many), the flood goes on, and nothing an agent said is lost.
. "$(dirname "$0")/rtlib.sh"
need python3
N=300
keygen
"$HRM" keygen --node f --node-count $N "$S/keys" >/dev/null || fail "keygen --node-count"
start_master --reconcile 60s --node-timeout 600s
"$HRM" agent --state "$S" --simulate-exec --count $N --name-prefix f --cpus 1 --mem 1G \
  --heartbeat 20ms --usage-period 20ms --log-level warning >>"$TMP/fleet.log" 2>&1 &
FLEET=$!; PIDS+=("$FLEET")
until_ok 120 nodes_up $N || fail "not all $N agents registered"
job=$("$HRM" submit --count $N --cpus 1 -- sleep 3600) || fail "submit"
until_ok 120 started "$job" $N || fail "not every task started"

port=$(sed 's/.*://' "$S/endpoint")
# Bytes waiting in the master's receive queues (its end of every agent's connection).
backlog() { python3 - "$port" <<'PY'
import sys
port = int(sys.argv[1]); total = 0
for line in open("/proc/net/tcp").read().splitlines()[1:]:
    f = line.split()
    if int(f[1].split(":")[1], 16) == port and f[3] == "01":
        total += int(f[4].split(":")[1], 16)
print(total)
PY
}
at_least() { [ "$(backlog)" -ge "$1" ]; }
kill -STOP "$MASTER"
until_ok 120 at_least 2000000 || { kill -CONT "$MASTER"; fail "no backlog of agent messages built up"; }
( timeout 120 "$HRM" jobs >"$TMP/jobs.out" 2>&1; echo $? >"$TMP/jobs.rc" ) &
PIDS+=("$!")
kill -CONT "$MASTER"
until_ok 120 test -s "$TMP/jobs.rc" || fail "hrm jobs did not finish"
[ "$(cat "$TMP/jobs.rc")" = 0 ] || fail "hrm jobs failed: $(cat "$TMP/jobs.out")"
grep -q "$job" "$TMP/jobs.out" || fail "hrm jobs does not list the job"
grep -Eq "answering [0-9]+ client requests? ahead of [1-9][0-9]* agent messages? waiting" "$TMP/master.log" ||
  fail "the client's request was not answered ahead of the agents' waiting messages"
kill -0 "$FLEET" || fail "the fleet stopped"
# The agents' messages were handled after it, none dropped: every node stays up, every run kept.
nodes_up $N || fail "nodes went down"
started "$job" $N || fail "runs were lost"
expect_exit 0 "$HRM" jobs
"$HRM" cancel "$job" >/dev/null || fail "cancel"
echo ok
