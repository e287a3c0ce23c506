# Execution queues on the nodes (distributed scheduling): a queue's priority orders what starts when a core frees, its max bounds what runs at once, its limits refuse tasks at submission.
. "$(dirname "$0")/rtlib.sh"
keygen
expect_exit 1 "$HRM" master --state "$TMP/c" --exec-queue fast
grep -q "needs a distributed policy" "$TMP/err" || fail "--exec-queue on the central path not refused"
expect_exit 1 "$HRM" master --state "$TMP/c" --policy dhrm --exec-queue "fast,speed=2"
grep -q "unknown key 'speed'" "$TMP/err" || fail "bad queue key not named"
expect_exit 1 "$HRM" master --state "$TMP/c" --policy dhrm --exec-queue a --exec-queue a
grep -q "given twice" "$TMP/err" || fail "duplicate queue not refused"

start_master --policy dhrm-batch --param instances=2 --exec-queue "fast,priority=10" \
  --exec-queue "slow,priority=0,max=1,cpus=1,mem=1G"
start_agent n1 --cpus 2 --mem 4G
until_ok 20 nodes_up 1 || fail "node did not register"
grep -q "execution queues on (policy dhrm-batch, node 0, 2 queues)" "$TMP/n1.log" \
  || fail "the agent did not take the two queues"

# Refused at submission: a queue that does not exist, a task over its queue's limit.
expect_exit 2 "$HRM" submit --queue nosuch -- true
grep -q "not an execution queue of this cluster (fast, slow)" "$TMP/err" || fail "unknown queue"
expect_exit 2 "$HRM" submit --queue slow --cpus 2 -- true
grep -q "more than queue 'slow' allows" "$TMP/err" || fail "over the queue's limit"

# max=1: the slow queue runs one task at a time on the node, though it has two cores.
s=$("$HRM" submit --queue slow --count 4 -- sleep 0.3) || fail "submit slow"
expect_exit 0 timeout 60 "$HRM" wait "$s"
"$HRM" job "$s" --json >"$TMP/s.json"
python3 - "$TMP/s.json" <<'P' || fail "the slow queue ran two tasks at once"
import json, sys
d = json.load(open(sys.argv[1])); t = sorted((x["start_us"], x["end_us"]) for x in d.get("job", d)["tasks"])
assert all(b[0] >= a[1] for a, b in zip(t, t[1:])), t
P

# Priority: with both cores busy, slow work queued first and fast work queued later, the fast
# tasks take the cores as they free.
b=$("$HRM" submit --queue fast --count 2 -- sleep 1) || fail "submit blocker"
until_ok 20 started "$b" 2 || fail "blocker never started"
sl=$("$HRM" submit --queue slow --count 2 -- sleep 0.2) || fail "submit slow 2"
sleep 0.2
fa=$("$HRM" submit --queue fast --count 2 -- sleep 0.2) || fail "submit fast"
for id in "$b" "$sl" "$fa"; do expect_exit 0 timeout 60 "$HRM" wait "$id"; done
"$HRM" job "$sl" --json >"$TMP/sl.json"; "$HRM" job "$fa" --json >"$TMP/fa.json"
python3 - "$TMP/sl.json" "$TMP/fa.json" <<'P' || fail "slow work started before fast work"
import json, sys
st = lambda f: [x["start_us"] for x in (lambda d: d.get("job", d))(json.load(open(f)))["tasks"]]
slow, fast = st(sys.argv[1]), st(sys.argv[2])
assert max(fast) <= min(slow), (fast, slow)
P
# A job with no queue named goes to the first queue.
d=$("$HRM" submit -- true) || fail "submit default"
expect_exit 0 timeout 30 "$HRM" wait "$d"
