# 200 simulated agents in one process register and report for a few seconds: the fleet's loop turns the agents that are woken or due and looks at no other (it walked all 200 twice per wake-up before: a fleet of 2,500 per process did O(agents) work at every one of its thousands of wake-ups a second); it says so when it stops, and every agent registered and kept reporting.
. "$(dirname "$0")/rtlib.sh"
N=200
keygen
start_master --node-timeout 600s
start_fleet $N f --cpus 1 --mem 1G --log-level notice
# Some seconds of heartbeats and usage reports (two a second per agent), then a task per agent.
job=$("$HRM" submit --count $N --cpus 1 -- sleep 1) || fail "submit"
expect_exit 0 timeout 120 "$HRM" wait "$job"
kill -TERM "$FLEET"; wait "$FLEET" 2>/dev/null || true
line=$(grep "simulated agents stop:" "$TMP/fleet.log" || true)
[ -n "$line" ] || fail "the fleet did not say what its loop did"
wakeups=$(echo "$line" | sed -n 's/.* \([0-9]*\) loop wake-ups.*/\1/p')
turns=$(echo "$line" | sed -n 's/.*, \([0-9]*\) agent turns.*/\1/p')
looked=$(echo "$line" | sed -n 's/.*, \([0-9]*\) agents looked at.*/\1/p')
[ -n "$wakeups" ] && [ -n "$turns" ] && [ -n "$looked" ] || fail "unreadable: $line"
# Every agent turned for its registration, its heartbeats and its task.
[ "$turns" -ge $((N * 2)) ] || fail "$turns turns for $N agents: $line"
# Each turn's agent is looked at when it is due or woken and when it is turned: about two per
# turn, whatever the fleet's size (a walk of every agent per wake-up looked at 2 x 200 each time:
# some 50 per turn here, where a wake-up turns a handful).
[ "$looked" -le $((turns * 3 + N)) ] || fail "the loop looked at $looked agents for $turns turns: $line"
echo ok
