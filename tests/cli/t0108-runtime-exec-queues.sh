# Execution queues on the nodes (distributed scheduling): a queue's priority orders what starts when a core frees, its max bounds what runs at once, its limits refuse tasks at submission.
. "$(dirname "$0")/rtlib.sh"
keygen
# Each refused master runs under timeout: one that starts instead fails the test, never hangs it.
expect_exit 1 timeout 30 "$HRM" master --state "$TMP/c" --exec-queue fast
grep -q "needs a distributed policy" "$TMP/err" || fail "--exec-queue on the central path not refused"
expect_exit 1 timeout 30 "$HRM" master --state "$TMP/c" --policy dhrm --exec-queue "fast,speed=2"
grep -q "unknown key 'speed'" "$TMP/err" || fail "bad queue key not named"
expect_exit 1 timeout 30 "$HRM" master --state "$TMP/c" --policy dhrm --exec-queue a --exec-queue a
grep -q "given twice" "$TMP/err" || fail "duplicate queue not refused"

start_master --policy dhrm-batch --param instances=2 --exec-queue "fast,priority=10" \
  --exec-queue "slow,priority=0,max=1,cpus=1,mem=1G"
start_agent n1 --cpus 2 --mem 4G
until_ok 60 nodes_up 1 || fail "node did not register"
grep -q "execution queues on (policy dhrm-batch, node 0, 2 queues)" "$TMP/n1.log" \
  || fail "the agent did not take the two queues"

# Refused at submission: a queue that does not exist, a task over its queue's limit.
expect_exit 2 "$HRM" submit --queue nosuch -- true
grep -q "not an execution queue of this cluster (fast, slow)" "$TMP/err" || fail "unknown queue"
expect_exit 2 "$HRM" submit --queue slow --cpus 2 -- true
grep -q "more than queue 'slow' allows" "$TMP/err" || fail "over the queue's limit"

# max=1: the slow queue runs one task at a time on the node, though it has two cores.
s=$("$HRM" submit --queue slow --count 4 -- sleep 0.3) || fail "submit slow"
expect_exit 0 timeout 120 "$HRM" wait "$s"
"$HRM" job "$s" --json >"$TMP/s.json"
python3 - "$TMP/s.json" <<'P' || fail "the slow queue ran two tasks at once"
import json, sys
d = json.load(open(sys.argv[1])); t = sorted((x["start_us"], x["end_us"]) for x in d.get("job", d)["tasks"])
assert all(b[0] >= a[1] for a, b in zip(t, t[1:])), t
P

# Priority: with both cores busy, slow work queued first and fast work queued later, the fast
# tasks take the cores as they free.  The two blockers hold the cores until every later task
# waits in the node's queues (a gate file, not a time: under load a timed blocker could end
# before the fast work arrived, and the slow work would rightly start first).
# A job with no queue named goes to the first queue (fast): it too starts before the slow work.
queued() { # JOB N: N of the job's tasks wait in a node's queue
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
sys.exit(0 if j["queued"] == int(sys.argv[1]) else 1)' "$2"
}
b=$("$HRM" submit --queue fast --count 2 -- sh -c "while [ ! -e $TMP/go ]; do sleep 0.05; done") \
  || fail "submit blocker"
until_ok 60 started "$b" 2 || fail "blocker never started"
sl=$("$HRM" submit --queue slow --count 2 -- sleep 0.2) || fail "submit slow 2"
until_ok 60 queued "$sl" 2 || fail "the slow tasks never waited in the node's queue"
fa=$("$HRM" submit --queue fast --count 2 -- sleep 0.2) || fail "submit fast"
until_ok 60 queued "$fa" 2 || fail "the fast tasks never waited in the node's queue"
d=$("$HRM" submit -- sleep 0.2) || fail "submit default"
until_ok 60 queued "$d" 1 || fail "the default-queue task never waited in the node's queue"
touch "$TMP/go"
for id in "$b" "$sl" "$fa" "$d"; do expect_exit 0 timeout 120 "$HRM" wait "$id"; done
for id in "$sl" "$fa" "$d"; do "$HRM" job "$id" --json >"$TMP/$id.json"; done
python3 - "$TMP/$sl.json" "$TMP/$fa.json" <<'P' || fail "slow work started before fast work"
import json, sys
st = lambda f: [x["start_us"] for x in (lambda d: d.get("job", d))(json.load(open(f)))["tasks"]]
slow, fast = st(sys.argv[1]), st(sys.argv[2])
assert max(fast) <= min(slow), (fast, slow)
P
python3 - "$TMP/$sl.json" "$TMP/$d.json" <<'P' || fail "a job with no queue named did not go to the first queue"
import json, sys
job = lambda f: (lambda d: d.get("job", d))(json.load(open(f)))
slow, dflt = job(sys.argv[1]), job(sys.argv[2])
assert dflt["queue"] == "default", dflt["queue"]
assert dflt["tasks"][0]["start_us"] <= min(t["start_us"] for t in slow["tasks"]), (dflt, slow)
P
