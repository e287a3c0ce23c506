# Probes, releases of holds and the nodes' replies to probes record nothing, so the master relays them in its read loop, not after its turn's scheduling pass and commit: in the step trace (--trace), every probe and reply of an hrm sched process's instance is followed by a "relay" line (what left before the commit) before the turn's "flush" line (what left after it), and the relay lines carry one message per probe and reply; the runs still leave after the commit (a "flush" line), and every task runs once.
# (The process probes through the master, --probe-via-master: that relay is what is tested.)
. "$(dirname "$0")/rtlib.sh"
need timeout
need python3
keygen
start_master --policy dhrm-nego --local-instances 0 --trace "$TMP/trace"
start_agent n1 --cpus 2
start_agent n2 --cpus 2
start_agent n3 --cpus 2
"$HRM" sched --state "$S" --name "s1-$$" --instances 2 --probe-via-master --log-level info >>"$TMP/s1.log" 2>&1 &
PIDS+=("$!")
until_ok 60 nodes_up 3 || fail "the agents did not register"
until_ok 60 grep -q "registered with the master" "$TMP/s1.log" || fail "s1 did not register"
j1=$("$HRM" submit --count 8 --cpus 1 -- true) || fail "submit 1"
j2=$("$HRM" submit --count 5 --cpus 1 -- true) || fail "submit 2"
expect_exit 0 timeout 120 "$HRM" wait "$j1"
expect_exit 0 timeout 120 "$HRM" wait "$j2"
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true # the trace is complete once it stops

python3 - "$TMP/trace" "$j1:8" "$j2:5" <<'PY' || fail "probes or replies waited for the commit: $(head -60 "$TMP/trace")"
import sys
path, jobs = sys.argv[1], dict(map(int, a.split(":")) for a in sys.argv[2:])
waiting = []  # probes and replies not yet followed by a relay line
relayed = steps = 0
runs = {}
for line in open(path):
    t, step, j, task, node = line.split()
    j, task, node = int(j), int(task), int(node)
    if step in ("probe", "reply"):
        waiting.append(line.strip())
        steps += 1
    elif step == "relay":
        assert j >= 1, line
        relayed += j
        waiting = []
    elif step == "flush":
        assert not waiting, f"left only with the turn's commit: {waiting[:5]}"
    elif step == "run" and j in jobs:
        runs[(j, task)] = runs.get((j, task), 0) + 1
assert not waiting, f"never relayed: {waiting[:5]}"
assert steps >= 2, f"{steps} probes and replies"
assert relayed == steps, f"{relayed} messages relayed before the commit for {steps} probes and replies"
for j, n in jobs.items():
    for k in range(n):
        assert runs.get((j, k)) == 1, f"task {j}.{k} placed {runs.get((j, k), 0)} times"
PY
