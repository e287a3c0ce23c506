# hrm-shared with hrm master and hrm sched started by hand: claims for a task or node that does not exist, for another instance's task, for a task that runs, and a flood of snapshot requests each get an error reply and a log line; the master goes on and jobs still run.  Bad flags are refused.
. "$(dirname "$0")/rtlib.sh"
keygen
"$HRM" keygen --add-scheduler "$S/keys" >/dev/null 2>&1 || true
start_master --policy hrm-shared --node-timeout 2s --log-level debug
start_agent n1 --cpus 2
until_ok 60 nodes_up 1 || fail "the node did not register"
"$HRM" sched --state "$S" --name s1 --instances 1 --log-level info >>"$TMP/s1.log" 2>&1 &
PIDS+=("$!")
until_ok 60 grep -q "registered with the master: instances 0..0 of policy hrm-shared" "$TMP/s1.log" \
  || fail "s1 did not register"
# A job of two tasks of 2 CPUs on a 2-CPU node: task 0 or 1 runs (held by a gate), the other
# waits in s1's instance.
g=$("$HRM" submit --count 2 --cpus 2 -- sh -c "while [ ! -e $TMP/go ]; do sleep 0.05; done") || fail "submit g"
until_ok 60 started "$g" 1 || fail "g did not start"
run=$("$HRM" job "$g" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
print([t["task"] for t in j["tasks"] if t["state"] == "running"][0])') || fail "no running task"

mkdir "$TMP/skeys"; cp "$S/keys/master.pub" "$TMP/skeys/"; cp "$S/keys/scheduler.key" "$TMP/skeys/client.key"
mine=-17 # evil registers after s1 (instance 0): its one instance is 1, at address -16 - 1
reg='{"v":1,"type":"sched_register","name":"evil","instances":1}'
claim() { # job task node status
  echo "{\"v\":1,\"type\":\"claim\",\"from\":$mine,\"to\":0,\"job\":$1,\"task\":$2,\"node\":$3,\"attempt\":1,\"status\":$4,\"value\":1}"
}
# Each refusal drops evil's instances (its jobs go back to the table), so it registers anew
# before each bad message.
bad() { # name message: registers, sends, keeps the replies in $TMP/bad-NAME
  echo "$reg" >"$TMP/r.json"; echo "$2" >"$TMP/m.json"
  set +e; "$HRM" raw --keys "$TMP/skeys" --timeout 3 "$TMP/r.json" "$TMP/m.json" >"$TMP/bad-$1" 2>&1; set -e
  grep -q '"type":"sched_welcome"' "$TMP/bad-$1" || fail "$1: evil not welcomed: $(cat "$TMP/bad-$1")"
}
bad nojob "$(claim 424242 0 0 1)"
grep -q "no task 424242.0 was given to an instance" "$TMP/bad-nojob" || fail "a claim of no task: $(cat "$TMP/bad-nojob")"
bad nonode "$(claim "$g" "$run" 9999 1)"
grep -q "no node 9999" "$TMP/bad-nonode" || fail "a claim on no node: $(cat "$TMP/bad-nonode")"
other=$((1 - run))
bad notmine "$(claim "$g" "$other" 0 3)"
grep -q "task $g.$other is not held by instance 1" "$TMP/bad-notmine" \
  || fail "a claim of s1's task: $(cat "$TMP/bad-notmine")"
grep -q "shared state: claim from instance 1 of evil refused" "$TMP/master.log" || fail "no log line"
# A flood: snapshot requests that wait for a change the cell has not seen; the second one breaks
# the protocol (one transaction at a time) and every one after finds evil unregistered.
{ echo "$reg"; for _ in $(seq 300); do
    echo "{\"v\":1,\"type\":\"snap_request\",\"from\":$mine,\"to\":0,\"job\":-1,\"attempt\":1,\"value\":999999}"
  done; } >"$TMP/flood"
set +e; "$HRM" raw --keys "$TMP/skeys" --timeout 3 "@lines:$TMP/flood" >"$TMP/bad-flood" 2>&1; set -e
grep -q "snap_request: out of turn" "$TMP/bad-flood" || fail "flood: $(head -c 2000 "$TMP/bad-flood")"
grep -q '"code":"not_registered"' "$TMP/bad-flood" || fail "flood: the rest was taken"
grep -q "shared state: snap_request from instance 1 of evil refused" "$TMP/master.log" || fail "no flood log line"
kill -0 "$MASTER" || fail "the master died"
# The table is intact: g's tasks each run once, and a new job runs through s1.
touch "$TMP/go"
expect_exit 0 timeout 120 "$HRM" wait "$g"
e=$("$HRM" submit --count 3 -- true) || fail "submit after the bad messages"
expect_exit 0 timeout 120 "$HRM" wait "$e"
"$HRM" job "$g" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
assert all(t["attempt"] == 1 for t in j["tasks"]), j["tasks"]' || fail "a task of g ran twice"
expect_exit 0 "$HRM" stats --json
grep -q '"protocol_errors": [4-9]' "$TMP/out" || fail "protocol errors not counted: $(cat "$TMP/out")"

# Bad flags: hrm-shared has no node queues and no instances in the master.
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true
expect_exit 1 timeout 60 "$HRM" master --state "$TMP/m2" --policy hrm-shared --local-instances 2
grep -q "local-instances: policy hrm-shared runs its instances in hrm sched" "$TMP/err" "$TMP/out" \
  || fail "--local-instances: $(cat "$TMP/err")"
expect_exit 1 timeout 60 "$HRM" master --state "$TMP/m3" --policy hrm-shared --param strict=maybe
grep -q "strict" "$TMP/err" "$TMP/out" || fail "a bad parameter: $(cat "$TMP/err")"
expect_exit 2 timeout 60 "$HRM" up --nodes 1 --state "$TMP/u" --policy hrm-shared --exec-queue q
grep -q "exec-queue needs a distributed --policy" "$TMP/err" || fail "--exec-queue: $(cat "$TMP/err")"
