# Direct probes and keys: a scheduler key added to the allow-list while the agents run is declared to them at once (the master re-reads the list and welcomes each node again), so its process probes them directly; a key removed again is taken back from them and refused by the master; an agent that registers again is probed directly; a --probe-listen that cannot be bound stops the agent with the flag named.
. "$(dirname "$0")/rtlib.sh"
need timeout python3
keygen

start_master --policy sparrow --local-instances 0 --trace "$TMP/trace"
expect_exit 1 timeout 60 "$HRM" agent --state "$S" --name nob --no-cgroup --probe-listen "tcp://192.0.2.1:*"
matches -- "--probe-listen tcp://192.0.2.1:\*" <"$TMP/err" || fail "an address that cannot be bound is not named: $(cat "$TMP/err")"
start_agent n1 --cpus 2
start_agent n2 --cpus 2
until_ok 60 nodes_up 2 || fail "the agents did not register"
for n in n1 n2; do
  until_ok 60 grep -q "probes from scheduler processes taken on .* (1 scheduler key)" "$TMP/$n.log" \
    || fail "$n was not told the one scheduler key"
done
# A second scheduler key, listed while the agents run: the master re-reads the list on its own
# (no peer hand-shakes here) and welcomes each node again with both keys.
"$HRM" keygen "$TMP/other" >/dev/null || fail "keygen other"
mkdir -p "$TMP/k2"; chmod 700 "$TMP/k2"
cp "$TMP/other/scheduler.key" "$TMP/other/scheduler.pub" "$TMP/k2/"
cp "$S/keys/master.pub" "$TMP/k2/"
echo "scheduler $(cat "$TMP/other/scheduler.pub")" >>"$S/keys/authorized"
for n in n1 n2; do
  until_ok 60 grep -q "probes from scheduler processes taken on .* (2 scheduler keys)" "$TMP/$n.log" \
    || fail "$n was not told the key added to the allow-list: $(grep 'scheduler key' "$TMP/$n.log")"
done
grep -q "the scheduler keys changed: 2 nodes told the 2 listed now" "$TMP/master.log" \
  || fail "the master does not say it told the nodes: $(grep -i 'allow-list\|scheduler keys' "$TMP/master.log")"
"$HRM" sched --state "$S" --keys "$TMP/k2" --name late --instances 1 --log-level info >>"$TMP/late.log" 2>&1 &
LATE=$!; PIDS+=("$LATE")
until_ok 60 grep -q "registered with the master" "$TMP/late.log" || fail "late did not register: $(tail -3 "$TMP/late.log")"
run_tasks a 4 "the job of the process with the added key"
a=$JOB
# The added key is removed again, and a process with the first key joins: the nodes are told the
# one key left, the master refuses late from its next message on, and the jobs go on (to s1).
grep -vF -e "$(cat "$TMP/other/scheduler.pub")" "$S/keys/authorized" >"$TMP/authorized"
cat "$TMP/authorized" >"$S/keys/authorized"
told_one_again() { sed -n '/(2 scheduler keys)/,$p' "$TMP/$1.log" | grep -q "taken on .* (1 scheduler key)"; }
for n in n1 n2; do
  until_ok 60 told_one_again "$n" || fail "$n was not told the key was removed: $(grep 'scheduler key' "$TMP/$n.log")"
done
gone() { ! kill -0 "$1" 2>/dev/null; }
until_ok 60 gone "$LATE" || fail "the process whose key was removed goes on: $(tail -3 "$TMP/late.log")"
rc=0; wait "$LATE" || rc=$?
[ "$rc" -ne 0 ] || fail "late exited 0 after its key was removed"
grep -q "the master refuses this process: this key was removed from the allow-list" "$TMP/late.log" \
  || fail "late does not say why it stopped: $(tail -3 "$TMP/late.log")"
start_sched s1 --instances 1
run_tasks c 4 "the job placed after the added key was removed"
# n1 restarts: its new welcome declares the one key, and it is probed directly from then on.
kill -TERM "$AGENT_n1"; wait "$AGENT_n1" 2>/dev/null || true
start_agent n1 --cpus 2
until_ok 60 nodes_up 2 || fail "n1 did not come back"
N1=$(sed -n 's/.*n1 registered with the master as node \([0-9]*\).*/\1/p' "$TMP/n1.log" | tail -1)
run_tasks b 4 "the job placed after n1 came back"
b=$JOB
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true
python3 - "$TMP/trace" "$a" "$b" "$N1" <<'PY' || fail "probes did not take the expected paths: $(grep -E ' probe ' "$TMP/trace" | head -20)"
import sys
path, a, b, n1 = sys.argv[1], *map(int, sys.argv[2:])
probes = {}
for line in open(path):
    t, step, j, task, node = line.split()
    if step == "probe":
        probes[(int(j), int(node))] = probes.get((int(j), int(node)), 0) + 1
assert sum(v for (j, n), v in probes.items() if j == a) == 0, f"job {a}'s probes went through the master: {probes}"
assert probes.get((b, n1), 0) == 0, f"job {b}'s probes to n1 went through the master: {probes}"
PY
kill -TERM "$AGENT_n1"; wait "$AGENT_n1" 2>/dev/null || true
grep -q "probes taken straight from scheduler processes: [1-9][0-9]* (0 refused)" "$TMP/n1.log" \
  || fail "the restarted n1 was not probed directly: $(grep 'probes taken' "$TMP/n1.log")"
