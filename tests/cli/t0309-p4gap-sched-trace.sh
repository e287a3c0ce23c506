# hrm sched --trace FILE: the scheduler process writes a line per step of its probing rounds on the master's clock (job, hold, reply, run, flush), so bench p4real can split the master's "handed -> run": the job arrives once, each task's run is decided there, every hold sent straight to a node has its reply, and a bad path is named.
. "$(dirname "$0")/rtlib.sh"
need timeout python3
"$HRM" sched --help | matches -- "--trace FILE" || fail "sched --help does not document --trace"
keygen
expect_exit 1 timeout 60 "$HRM" sched --state "$S" --name bad --trace "$TMP/no/such/dir/t"
matches -- "--trace $TMP/no/such/dir/t" <"$TMP/err" || fail "a bad --trace is not named: $(cat "$TMP/err")"

start_master --policy dhrm-nego --local-instances 0
start_agent n1 --cpus 2
start_agent n2 --cpus 2
start_sched s1 --instances 1 --trace "$TMP/s1.trace"
until_ok 60 nodes_up 2 || fail "the agents did not register"
direct_probes n1 n2
run_tasks t 6 "the job"
j=$JOB
kill -TERM "$SCHED"; wait "$SCHED" 2>/dev/null || true # the trace is complete once it stops
python3 - "$TMP/s1.trace" "$j" 6 <<'PY' || fail "the trace: $(head -20 "$TMP/s1.trace")"
import sys
path, job, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
jobs, runs, holds, replies, flushes = 0, set(), {}, {}, 0
for line in open(path):
    w = line.split()
    assert len(w) == 5, f"not 'WALL_US STEP JOB TASK NODE': {line!r}"
    t, step, a, b, node = int(w[0]), w[1], int(w[2]), int(w[3]), int(w[4])
    if step == "job":
        jobs += a == job
    elif step == "run":
        assert a == job and 0 <= b < n and node in (0, 1), line
        runs.add(b)
    elif step == "hold":
        assert node in (0, 1) and b >= 0, line
        holds[a] = node
    elif step == "reply":
        replies[a] = node
    elif step == "flush":
        assert a > 0, line
        flushes += 1
    else:
        raise AssertionError(f"unknown step {step!r}")
assert jobs == 1, f"the job arrived {jobs} times"
assert runs == set(range(n)), f"runs decided for tasks {sorted(runs)}"
assert holds, "no hold went straight to a node"
for pid, node in holds.items():
    assert replies.get(pid) == node, f"hold {pid} to node {node}: reply {replies.get(pid)}"
assert flushes >= 1, "no flush line"
PY
