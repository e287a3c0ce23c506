# Direct probes: with a distributed policy, hrm sched probes the agents straight (hold, hold_reply, del): the master relays none of a placement's probes or replies (its trace has no probe or reply step, hrm_probes_relayed_total stays 0) while every task runs once through it; the agent's and the process's flags are documented and a bad --probe-listen is named.
. "$(dirname "$0")/rtlib.sh"
need timeout python3
"$HRM" agent --help | matches -- "--probe-listen ADDR" || fail "agent --help does not document --probe-listen"
"$HRM" sched --help | matches -- "--probe-via-master" || fail "sched --help does not document --probe-via-master"
keygen
expect_exit 2 "$HRM" agent --state "$S" --name bad --probe-listen "udp://x"
matches -- "--probe-listen: 'udp://x'" <"$TMP/err" || fail "a bad --probe-listen is not named: $(cat "$TMP/err")"

start_master --policy dhrm-nego --local-instances 0 --trace "$TMP/trace"
start_agent n1 --cpus 2
start_agent n2 --cpus 2
start_sched s1 --instances 2
until_ok 60 nodes_up 2 || fail "the agents did not register"
direct_probes n1 n2
run_tasks d 12 "the job placed with direct probes"
j=$JOB
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true # the trace is complete once it stops
python3 - "$TMP/trace" "$j" 12 <<'PY' || fail "probes went through the master: $(grep -E ' (probe|reply) ' "$TMP/trace" | head -5)"
import sys
path, job, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs, relayed = 0, 0
for line in open(path):
    t, step, j, task, node = line.split()
    if step in ("probe", "reply"):
        relayed += 1
    elif step == "run" and int(j) == job:
        runs += 1
assert runs == n, f"{runs} runs of {n} went through the master"
assert relayed == 0, f"{relayed} probes or replies relayed"
PY
kill -TERM "$AGENT_n1" "$AGENT_n2"; wait "$AGENT_n1" "$AGENT_n2" 2>/dev/null || true
# The agents answered the probes themselves, straight to the process.
taken=0
for n in n1 n2; do
  k=$(sed -n 's/.*probes taken straight from scheduler processes: \([0-9]*\) (0 refused).*/\1/p' "$TMP/$n.log")
  [ -n "$k" ] || fail "$n did not count its probes: $(tail -3 "$TMP/$n.log")"
  taken=$((taken + k))
done
[ "$taken" -ge 2 ] || fail "the agents took $taken probes straight from s1 (a hold and its release at least)"

grep -q "probes relayed by the master: 0 (" "$TMP/master.log" \
  || fail "the master's count of relayed probes is not 0: $(grep 'probes relayed' "$TMP/master.log")"
