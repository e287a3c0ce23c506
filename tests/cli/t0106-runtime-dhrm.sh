# Distributed scheduling in the daemons (dhrm-nego): scheduler instances and the negotiator in the master, execution queues in the agents; the issue's end-to-end checks on that path.
. "$(dirname "$0")/rtlib.sh"
keygen
POL=(--policy dhrm-nego --param instances=3 --param hw_ms=50 --compact-tasks 500)
start_master "${POL[@]}" --node-timeout 2s --reconcile 3s
start_agent n1 --cpus 2 --mem 2G
start_agent n2 --cpus 2 --mem 2G
start_agent n3 --cpus 2 --mem 2G
until_ok 60 nodes_up 3 || fail "nodes did not register"
grep -q "execution queues on (policy dhrm-nego" "$TMP/n1.log" || fail "n1 runs no execution queues"
mkdir -p "$TMP/runs"
# until GATE: a task's shell code that waits until the test creates $TMP/GATE.  Tasks that must
# still run at some point wait on a gate, not on a time a loaded machine may overrun.
until_gate() { echo "while [ ! -e $TMP/$1 ]; do sleep 0.05; done"; }
node_is_down() { "$HRM" nodes | matches "$1 .*down"; }

# The negotiator moves work.  Three tasks of two cores fill the three nodes, started in one
# pass so that they have run about as long; the 12 tasks of mv queue behind them, spread by
# their waits.  Then two of the three end: tasks queued behind the third (past its estimate,
# still running) are expected to wait longer than hw and move to the idle nodes.  The third
# holds its node until a task has moved away from behind it.
fill=$("$HRM" submit --count 3 --cpus 2 -- sh -c "$(until_gate 'fill-go-$HRM_TASK_ID')") || fail "submit fill"
until_ok 60 started "$fill" 3 || fail "the three filling tasks never all started"
mv=$("$HRM" submit --count 12 --cpus 1 -- sh -c "echo x >> $TMP/runs/m-\$HRM_TASK_ID; sleep 0.2") || fail "submit mv"
queued_all() { "$HRM" nodes --json | python3 -c 'import json,sys; sys.exit(0 if sum(x["queued"] for x in json.load(sys.stdin)) >= 12 else 1)'; }
until_ok 60 queued_all || { "$HRM" nodes --json >&2; fail "mv's tasks did not all queue"; }
touch "$TMP/fill-go-1" "$TMP/fill-go-2"
moved() { "$HRM" nodes --json | python3 -c 'import json,sys; n=json.load(sys.stdin); i=sum(x["moved_in"] for x in n); o=sum(x["moved_out"] for x in n); sys.exit(0 if i >= 1 and i == o else 1)'; }
until_ok 120 moved || { "$HRM" nodes --json >&2; fail "the negotiator moved no task (or moves in != moves out)"; }
touch "$TMP/fill-go-0"
expect_exit 0 timeout 120 "$HRM" wait "$mv"
expect_exit 0 timeout 120 "$HRM" wait "$fill"
ran_once m 12 "the job the negotiator balanced"

# A job that fails for good skips its tasks that have not started, those waiting in a node's
# queue included: 6 run (task 0 fails once all 6 have started; the others end after the job
# has failed), 6 wait and are skipped.
job_failed() { "$HRM" job "$1" --json | matches '"failed": 1'; }
f=$("$HRM" submit --count 12 --cpus 1 -- sh -c "echo x >> $TMP/runs/f-\$HRM_TASK_ID
  if [ \$HRM_TASK_ID = 0 ]; then
    until [ \$(ls $TMP/runs | grep -c '^f-') -ge 6 ]; do sleep 0.05; done; exit 4
  fi
  $(until_gate f-go)") || fail "submit f"
until_ok 60 job_failed "$f" || fail "task 0 of job f never failed"
touch "$TMP/f-go"
expect_exit 4 timeout 120 "$HRM" wait "$f"
"$HRM" job "$f" --json >"$TMP/f.json"
python3 - "$TMP/f.json" <<'P' || fail "job f: expected 1 failed, 5 done, 6 skipped"
import json, sys
d = json.load(open(sys.argv[1])); j = d.get("job", d)
assert (j["failed"], j["done"], j["skipped"]) == (1, 5, 6), j
P
# The failed task's node may start its next queued task in the freed core before the kill
# arrives (it is killed and stays skipped); no other queued task starts.
n=$(ls "$TMP"/runs/f-* | wc -l)
[ "$n" -ge 6 ] && [ "$n" -le 7 ] || fail "the failed job: $n tasks started, expected 6 (or 7)"

# 1,000 short tasks: all complete with their exit codes and their output captured.
ok=$("$HRM" submit --count 600 --cpus 250m -- sh -c 'echo out-$HRM_TASK_ID') || fail "submit ok"
bad=$("$HRM" submit --count 400 --cpus 250m -- sh -c 'echo err-$HRM_TASK_ID >&2; exit 5') || fail "submit bad"
expect_exit 0 timeout 240 "$HRM" wait "$ok"
expect_exit 5 timeout 240 "$HRM" wait "$bad"
"$HRM" job "$ok" --json >"$TMP/ok.json"
grep -q '"done": 600' "$TMP/ok.json" || fail "not all 600 tasks done"
"$HRM" job "$bad" --json >"$TMP/bad.json"
# Tasks of a failed job that had not been sent to a node are skipped; none is left pending.
python3 - "$TMP/bad.json" <<'P' || fail "job bad: tasks neither failed nor skipped"
import json, sys
d = json.load(open(sys.argv[1])); j = d.get("job", d)
assert j["failed"] >= 1 and j["failed"] + j["skipped"] == 400 and j["pending"] == 0, j
P
for t in 0 311 599; do
  [ "$("$HRM" logs "$ok" --task $t)" = "out-$t" ] || fail "stdout of task $t"
done
# Which task fails first depends on the nodes' timing: read the stderr of one that did fail
# (task 0 may have been skipped before it was sent).
"$HRM" job "$bad" --task-state failed --json >"$TMP/bad-failed.json"
ft=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["tasks"][0]["task"])' "$TMP/bad-failed.json") ||
  fail "no failed task listed"
[ "$("$HRM" logs "$bad" --task "$ft" --err)" = "err-$ft" ] || fail "stderr of failed task $ft"
# Every node ran some of them: the instances probe all the nodes.
for n in n1 n2 n3; do grep -q "\"node\": \"$n\"" "$TMP/ok.json" || fail "$n ran none of 600 tasks"; done

# A task larger than every node is refused at submission, as on the central path; GPU tasks
# need the central path.
expect_exit 2 "$HRM" submit --cpus 16 -- true
grep -q "more than any node" "$TMP/err" || fail "oversized request"
expect_exit 2 "$HRM" submit --gpus 1 -- true
grep -q "central path" "$TMP/err" || fail "GPU request not refused clearly"

# Cancel: six tasks run, six wait in the execution queues; all stop, none starts later.
c=$("$HRM" submit --count 12 --cpus 1 -- sh -c "echo x >> $TMP/runs/c-\$HRM_TASK_ID; exec sleep 60.321") || fail "submit c"
until_ok 60 sh -c "'$HRM' job $c --json | grep -q '\"queued\": 6'" || fail "c was not queued on the nodes"
until_ok 60 sh -c "ls $TMP/runs/c-* 2>/dev/null | wc -l | grep -qx 6" || fail "c did not start"
"$HRM" nodes --json | python3 -c 'import json,sys; n=json.load(sys.stdin); u=[x for x in n if x["state"] == "up"]; r=sum(x["tasks"] for x in u); q=sum(x["queued"] for x in u); sys.exit(0 if (r, q) == (6, 6) else "nodes: %d running, %d queued" % (r, q))' \
  || fail "hrm nodes does not show 6 running and 6 queued"
expect_exit 0 "$HRM" cancel "$c"
expect_exit 143 timeout 120 "$HRM" wait "$c"
until_ok 60 no_process -fx 'sleep 60.321' || fail "a task survived cancel"
# The queued six are gone from the nodes (so none can start later).
nodes_idle() { "$HRM" nodes --json | python3 -c 'import json,sys; n=[x for x in json.load(sys.stdin) if x["state"] == "up"]; sys.exit(0 if sum(x["tasks"] + x["queued"] for x in n) == 0 else 1)'; }
until_ok 60 nodes_idle || { "$HRM" nodes --json >&2; fail "the cancelled job's tasks stayed on the nodes"; }
ran_once c 6 "cancelled job (only the 6 that had a core start)"

# The 1,000 tasks passed --compact-tasks 500: once idle, the instances started over on an empty
# workload (everything after this point runs on the compacted instances).
grep -q "workload of [0-9]* tasks is dropped" "$TMP/master.log" || fail "the instances never compacted"

# Agent SIGKILL: 6 one-CPU tasks fill the nodes and hold them; n1 dies; its tasks run again
# elsewhere once the master has seen it go.
j=$("$HRM" submit --count 6 --cpus 1 -- sh -c "echo \$HRM_NODE >> $TMP/runs/a-\$HRM_TASK_ID; $(until_gate a-go)") || fail "submit j"
until_ok 60 sh -c "grep -qs n1 $TMP/runs/a-*" || fail "nothing ran on n1"
kill -KILL "$AGENT_n1"
until_ok 60 node_is_down n1 || fail "n1 never went down"
touch "$TMP/a-go"
expect_exit 0 timeout 120 "$HRM" wait "$j"
"$HRM" job "$j" --json >"$TMP/j"
grep -q '"attempt": 2' "$TMP/j" || fail "no task was placed again"
[ "$(cat "$TMP"/runs/a-* | grep -vc n1)" -ge 6 ] || fail "not every task ended away from n1"
"$HRM" nodes >"$TMP/nodes"; grep -q "n1 .*down" "$TMP/nodes" || fail "n1 not down"
start_agent n1 --cpus 2 --mem 2G
until_ok 60 nodes_up 3 || fail "n1 did not come back"

# Malformed and hostile role messages from a registered agent: logged and dropped, never fatal.
mkdir "$TMP/agentkeys"; cp "$S/keys/master.pub" "$TMP/agentkeys/"; cp "$S/keys/agent.key" "$TMP/agentkeys/client.key"
echo '{"v":1,"type":"register","name":"evil","rack":"rx","cpu":2000,"mem":1000000000,"gpus":0,"running":[],"finished":[]}' >"$TMP/reg.json"
cat >"$TMP/evil.json" <<'J'
{"v":1,"type":"batch","msgs":[
 {"v":1,"type":"hold_reply","to":12345,"attempt":3,"status":9,"value":0},
 {"v":1,"type":"hold_reply","to":-16,"attempt":-5,"status":65535,"value":-3},
 {"v":1,"type":"hold_reply","to":-16,"attempt":2147483647,"status":1,"value":5},
 {"v":1,"type":"run","to":2,"job":1,"task":0,"status":2},
 {"v":1,"type":"run","to":99999,"job":1,"task":0,"status":2,"desc":{}},
 {"v":1,"type":"run","to":3,"job":424242,"task":7,"status":2,"desc":{"job":424242,"task":7,"attempt":1,"cmd":["true"],"cwd":"/","cpu":1000,"mem":0}},
 {"v":1,"type":"migrate_offer","to":-2,"job":1,"task":0},
 {"v":1,"type":"migrate_offer","to":3,"job":-1,"task":-1},
 {"v":1,"type":"migrate_request","job":1,"task":0,"status":7,"node":-9},
 {"v":1,"type":"idle_advert","status":0,"node":5000,"gpu_mask":4,"attempt":4,"value":0},
 {"v":1,"type":"migrate_pull","to":2,"task":123456},
 {"v":1,"type":"get_task","to":-17,"job":3,"attempt":1},
 {"v":1,"type":"hold_reply","to":"x"}
]}
J
set +e; "$HRM" raw --keys "$TMP/agentkeys" --timeout 2 "$TMP/reg.json" "$TMP/evil.json" >"$TMP/out" 2>&1; set -e
grep -q '"nqs"' "$TMP/out" || { cat "$TMP/out" >&2; fail "no queue configuration in the welcome"; }
# Each message gets what it deserves, in order.  Refused (a bad_field error naming why): an
# address that is no instance, no other node or a string; a queue out of range.  Passed on to
# the role it names, which answers as it would any node: the hold reply of an attempt the
# instance never made is deleted (del), a task asked of an instance holding none (no_task).
# Dropped unanswered: runs of tasks the sender does not hold (stale or unknown), offers and
# pulls relayed to the node named (which refuses them there), an advert the negotiator weighs.
grep "^$TMP/evil.json: " "$TMP/out" | sed "s|^$TMP/evil.json: ||" >"$TMP/evil.out"
python3 - "$TMP/evil.out" <<'P' || { cat "$TMP/out" >&2; fail "the hostile role messages were not each answered as they deserve"; }
import json, sys
replies = json.load(open(sys.argv[1]))["msgs"]
want = [("error", "hold_reply: 'to' (12345) is no scheduler instance"),
        ("del", None),
        ("error", "run: 'to' (99999) is no other node"),
        ("error", "migrate_offer: 'to' (-2) is no other node"),
        ("error", "migrate_request: queue out of range"),
        ("no_task", None),
        ("error", "hold_reply: field 'to' must be an integer")]
got = [(r["type"], r.get("message")) for r in replies]
assert got == want, got
assert all(r["code"] == "bad_field" for r in replies if r["type"] == "error"), replies
P
# The refusals and the unknown run are in the master's log.
for why in "'to' (12345) is no scheduler instance" "'to' (99999) is no other node" \
           "'to' (-2) is no other node" "queue out of range"; do
  grep -qF "node evil: " "$TMP/master.log" && grep -qF "$why" "$TMP/master.log" || fail "not logged: $why"
done
grep -q "node evil moved an unknown task" "$TMP/master.log" || fail "the unknown run was not logged"
kill -0 "$MASTER" || fail "master died on hostile role messages"
until_ok 60 nodes_up 3 || fail "a node was lost to the hostile messages"
e=$("$HRM" submit --count 20 --cpus 500m -- true) || fail "submit after the hostile messages"
expect_exit 0 timeout 120 "$HRM" wait "$e"

# Master SIGKILL mid-load: tasks running and queued on the nodes are kept, acknowledged jobs are
# not lost, and nothing that finished runs again.
# Six tasks of k hold the six cores (until k-go) across the restart; six more wait in queues.
k=$("$HRM" submit --count 12 --cpus 1 -- sh -c "echo x >> $TMP/runs/k-\$HRM_TASK_ID; $(until_gate k-go)") || fail "submit k"
acked=()
for i in $(seq 20); do acked+=("$("$HRM" submit --name q -- sh -c "echo x >> $TMP/runs/q-$i")") || fail "submit q$i"; done
until_ok 60 sh -c "ls $TMP/runs/k-* 2>/dev/null | wc -l | grep -qx 6" || fail "k never ran"
kill -KILL "$MASTER"
wait "$MASTER" 2>/dev/null || true
start_master "${POL[@]}" --node-timeout 2s --reconcile 3s
until_ok 60 nodes_up 3 || fail "agents did not re-register"
touch "$TMP/k-go"
expect_exit 0 timeout 120 "$HRM" wait "$k"
for id in "${acked[@]}"; do expect_exit 0 timeout 120 "$HRM" wait "$id"; done
ran_once k 12 "job k"
ran_once q 20 "acknowledged one-task jobs"

# A policy the daemons do not run is refused with a reason.
expect_exit 1 timeout 30 "$HRM" master --state "$TMP/other" --policy sparrow-batch
grep -q "simulator only" "$TMP/err" || fail "sparrow-batch not refused clearly"
