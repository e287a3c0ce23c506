# Direct probes and keys: a scheduler key added to the allow-list after the agents' welcome was never declared to them, so its process gets no endpoints and probes through the master (nothing refused, every task runs); once an agent registers again its welcome declares the key and that process probes it directly; a --probe-listen that cannot be bound stops the agent with the flag named.
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
# A second scheduler key, listed after the agents were welcomed (the master re-reads the list).
"$HRM" keygen "$TMP/other" >/dev/null || fail "keygen other"
mkdir -p "$TMP/k2"; chmod 700 "$TMP/k2"
cp "$TMP/other/scheduler.key" "$TMP/other/scheduler.pub" "$TMP/k2/"
cp "$S/keys/master.pub" "$TMP/k2/"
echo "scheduler $(cat "$TMP/other/scheduler.pub")" >>"$S/keys/authorized"
"$HRM" sched --state "$S" --keys "$TMP/k2" --name late --instances 1 --log-level info >>"$TMP/late.log" 2>&1 &
LATE=$!; PIDS+=("$LATE")
until_ok 60 grep -q "registered with the master" "$TMP/late.log" || fail "late did not register: $(tail -3 "$TMP/late.log")"
mkdir -p "$TMP/runs"
a=$("$HRM" submit --count 4 --cpus 1 -- sh -c "echo x >> $TMP/runs/a-\$HRM_TASK_ID; sleep 0.3") || fail "submit a"
expect_exit 0 timeout 120 "$HRM" wait "$a"
ran_once a 4 "the job of the process with the late key"
# n1 restarts: its new welcome declares both keys, and late probes it directly from then on.
kill -TERM "$AGENT_n1"; wait "$AGENT_n1" 2>/dev/null || true
grep -q "probes taken straight from scheduler processes: 0 (0 refused)" "$TMP/n1.log" \
  || fail "n1 was probed directly by a key it was never told: $(grep 'probes taken' "$TMP/n1.log")"
start_agent n1 --cpus 2
until_ok 60 grep -q "probes from scheduler processes taken on .* (2 scheduler keys)" "$TMP/n1.log" \
  || fail "n1's new welcome does not declare both keys: $(tail -3 "$TMP/n1.log")"
until_ok 60 nodes_up 2 || fail "n1 did not come back"
N1=$(sed -n 's/.*n1 registered with the master as node \([0-9]*\).*/\1/p' "$TMP/n1.log" | tail -1)
b=$("$HRM" submit --count 4 --cpus 1 -- sh -c "echo x >> $TMP/runs/b-\$HRM_TASK_ID; sleep 0.3") || fail "submit b"
expect_exit 0 timeout 120 "$HRM" wait "$b"
ran_once b 4 "the job placed after n1 came back"
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true
python3 - "$TMP/trace" "$a" "$b" "$N1" <<'PY' || fail "probes did not take the expected paths: $(grep -E ' probe ' "$TMP/trace" | head -20)"
import sys
path, a, b, n1 = sys.argv[1], *map(int, sys.argv[2:])
probes = {}
for line in open(path):
    t, step, j, task, node = line.split()
    if step == "probe":
        probes[(int(j), int(node))] = probes.get((int(j), int(node)), 0) + 1
assert sum(v for (j, n), v in probes.items() if j == a) >= 4, f"job {a} was not probed through the master: {probes}"
assert probes.get((b, n1), 0) == 0, f"job {b}'s probes to n1 went through the master: {probes}"
PY
kill -TERM "$AGENT_n1"; wait "$AGENT_n1" 2>/dev/null || true
grep -q "probes taken straight from scheduler processes: [1-9][0-9]* (0 refused)" "$TMP/n1.log" \
  || fail "the restarted n1 was not probed directly: $(grep 'probes taken' "$TMP/n1.log")"
