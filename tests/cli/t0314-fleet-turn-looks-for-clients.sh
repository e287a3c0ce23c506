# A turn of agent messages looks for a waiting client every 16 messages and ends there, so a
# request waits for at most 16 agent messages (and their commit) before its turn, not 128 (the
# bound before: on a loaded host, hundreds of ms of wall time before `hrm jobs` was answered).
# The master is stopped while 200 simulated agents keep reporting, so that it wakes up to a
# backlog of their messages, and a listing arrives while it works through them; its debug log
# says after how many agent messages each turn ended for a client: a multiple of 16, and not
# always one of 128 (a turn looks at 16, 32, ... and the listing arrives at any of them).
. "$(dirname "$0")/rtlib.sh"
N=200
keygen
start_master --log-level debug --node-timeout 600s
start_fleet $N tl --cpus 1 --mem 8G --log-level warning
ends() { grep -o "turn ends after [0-9]* agent messages: a client waits" "$TMP/master.log" || true; }
# Stops the master for 3 s (a backlog of some 1,200 heartbeats and usage reports), starts a
# listing, wakes the master: true once a turn has ended for a waiting client between two of the
# looks that a look every 128 messages would make.
backlog_then_listing() {
  kill -STOP "$MASTER" || fail "SIGSTOP the master"
  sleep 3 # the backlog's size, not a synchronisation: the master is stopped meanwhile
  timeout 60 "$HRM" jobs --timeout 50 >/dev/null &
  local lister=$!
  kill -CONT "$MASTER" || fail "SIGCONT the master"
  wait "$lister" || fail "hrm jobs after the backlog"
  [ -n "$(ends | sed 's/turn ends after \([0-9]*\) agent.*/\1/' | awk '$1 % 128 != 0')" ]
}
until_ok 120 backlog_then_listing ||
  fail "no turn ended for a waiting client but at a multiple of 128 agent messages: $(ends | sort | uniq -c | tr '\n' ' ')"
odd=$(ends | sed 's/turn ends after \([0-9]*\) agent.*/\1/' | awk '$1 % 16 != 0')
[ -z "$odd" ] || fail "turns ended for a waiting client between two looks: after $odd agent messages"
nodes_up $N || fail "agents went down"
echo ok
