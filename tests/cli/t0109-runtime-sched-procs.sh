# Scheduler instances in processes of their own (hrm sched): jobs wait for one, run through them, move to another when one dies with SIGKILL, and survive a master restart; a central master refuses them.
. "$(dirname "$0")/rtlib.sh"
# Node timeout and reconcile window leave room for a loaded host: a live agent whose heartbeat
# is late by more than the timeout is rightly taken as lost and its tasks run again, which the
# exactly-once checks below would then count.
keygen
start_sched() { # name instances
  "$HRM" sched --state "$S" --name "$1" --instances "$2" --log-level info >>"$TMP/$1.log" 2>&1 &
  local pid=$!; PIDS+=("$pid")
  eval "SCHED_$1=$pid"
}
registered() { grep -q "registered with the master" "$TMP/$1.log" 2>/dev/null; }

# A central master takes no scheduler process: it says so, and the process exits 1.
start_master
expect_exit 1 timeout 20 "$HRM" sched --state "$S" --name x
grep -q "schedules centrally" "$TMP/err" "$TMP/out" || { cat "$TMP/err" >&2; fail "no refusal reason"; }
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true
: >"$TMP/master.log" # the logs below are the distributed master's

# Debug: the master logs which scheduler process each job goes to.
MFLAGS=(--policy dhrm-batch --local-instances 0 --node-timeout 6s --reconcile 8s --log-level debug)
start_master "${MFLAGS[@]}"
start_agent n1 --cpus 2
start_agent n2 --cpus 2
until_ok 60 nodes_up 2 || fail "nodes did not register"
mkdir -p "$TMP/runs"
# until GATE: a task's shell code that waits until the test creates $TMP/GATE.
until_gate() { echo "while [ ! -e $TMP/$1 ]; do sleep 0.05; done"; }
# sent_to JOB PROC [AFTER]: the master's log sends the job to an instance of scheduler process
# PROC (after the first line matching AFTER, when given).
sent_to() {
  awk -v after="${3:-}" -v want="job $1 (" -v proc=" of $2" \
    'after == "" || index($0, after) {on = 1} on && index($0, want) && index($0, " to instance ") && index($0, proc) {f = 1} END {exit !f}' \
    "$TMP/master.log"
}

# No instance anywhere yet: a job waits, pending; a scheduler process arrives and runs it.
w=$("$HRM" submit --count 4 -- sh -c "echo x >> $TMP/runs/w-\$HRM_TASK_ID") || fail "submit w"
"$HRM" job "$w" --json | matches '"pending": 4' || fail "the job did not wait for an instance"
start_sched s1 2
until_ok 60 registered s1 || fail "s1 did not register"
expect_exit 0 timeout 120 "$HRM" wait "$w"
ran_once w 4 "the job that waited for an instance"
# It went to an instance only once s1 had registered (it waited, pending, till then).
sent_to "$w" s1 "scheduler process s1 registered" || fail "the job was not sent to s1 after it registered"
awk -v w="job $w (" 'index($0, "scheduler process s1 registered") {exit} index($0, w) && index($0, " to instance ") {f = 1} END {exit f}' "$TMP/master.log" \
  || fail "the job went to an instance before any scheduler process registered"

# Two processes share the jobs; one dies with SIGKILL mid-load and its jobs move to the other.
start_sched s2 2
until_ok 60 registered s2 || fail "s2 did not register"
# The tasks hold until s1 is dead, so every job is still live when it dies.
ids=()
for i in $(seq 10); do
  ids+=("$("$HRM" submit --count 20 --cpus 500m -- sh -c "echo x >> $TMP/runs/k$i-\$HRM_TASK_ID; $(until_gate k-go)")") \
    || fail "submit k$i"
done
all_sent() { local id; for id in "${ids[@]}"; do grep -q "job $id (.*) to instance" "$TMP/master.log" || return 1; done; }
until_ok 60 all_sent || fail "the jobs never reached an instance"
s1_jobs=(); for id in "${ids[@]}"; do sent_to "$id" s1 && s1_jobs+=("$id"); done
[ "${#s1_jobs[@]}" -ge 1 ] || fail "s1 was given none of the 10 jobs"
kill -KILL "$SCHED_s1"
until_ok 60 grep -q "scheduler process s1 is gone" "$TMP/master.log" || fail "s1's death not noticed"
grep -q "scheduler process s1 is gone (.*): its ${#s1_jobs[@]} jobs go to other instances" "$TMP/master.log" \
  || fail "the master did not move exactly s1's ${#s1_jobs[@]} jobs"
for id in "${s1_jobs[@]}"; do
  until_ok 60 sent_to "$id" s2 "scheduler process s1 is gone" || fail "job $id of s1 never went to s2"
done
touch "$TMP/k-go"
for id in "${ids[@]}"; do expect_exit 0 timeout 120 "$HRM" wait "$id"; done
for i in $(seq 10); do ran_once "k$i" 20 "job k$i"; done
grep -q "instances 2..3" "$TMP/s2.log" || fail "s2 did not get the next instance numbers"

# The master dies with SIGKILL mid-load: s2 registers with the new one, nothing is lost or rerun.
# The tasks hold until the new master is up, so some run across the restart and some wait.
r=$("$HRM" submit --count 20 --cpus 500m -- sh -c "echo x >> $TMP/runs/r-\$HRM_TASK_ID; $(until_gate r-go)") || fail "submit r"
until_ok 60 sh -c "ls $TMP/runs | grep -q '^r-'" || fail "r never started"
kill -KILL "$MASTER"
wait "$MASTER" 2>/dev/null || true
start_master "${MFLAGS[@]}"
until_ok 60 nodes_up 2 || fail "agents did not come back"
until_ok 60 sh -c "[ \$(grep -c 'registered with the master' $TMP/s2.log) -ge 2 ]" || fail "s2 did not register again"
touch "$TMP/r-go"
expect_exit 0 timeout 120 "$HRM" wait "$r"
ran_once r 20 "the job across the master restart"
[ "$(grep -c "registered with the master" "$TMP/s2.log")" -ge 2 ] || fail "s2 did not register again"

# A scheduler key that misbehaves: each bad message gets an error reply naming why, and the
# master goes on.
mkdir "$TMP/skeys"; cp "$S/keys/master.pub" "$TMP/skeys/"; cp "$S/keys/scheduler.key" "$TMP/skeys/client.key"
# Since the restart, s2 is the only process: evil's one instance is numbered next.
read -r lo hi <<<"$(grep "registered with the master" "$TMP/s2.log" | tail -1 \
  | sed 's/.*instances \([0-9]*\)\.\.\([0-9]*\).*/\1 \2/')"
mine=$((-16 - hi - 1))
echo '{"v":1,"type":"sched_register","name":"evil","instances":1}' >"$TMP/sreg.json"
echo '{"v":1,"type":"hold","from":-16,"to":2,"attempt":1}' >"$TMP/s1.json"          # s2's instance
echo "{\"v\":1,\"type\":\"hold\",\"from\":$mine,\"to\":9999,\"attempt\":1}" >"$TMP/s2.json" # no node
echo "{\"v\":1,\"type\":\"run\",\"from\":$mine,\"to\":2,\"job\":424242,\"task\":0}" >"$TMP/s3.json"
echo '{"v":1,"type":"sched_register","name":"","instances":0}' >"$TMP/s4.json"
set +e; "$HRM" raw --keys "$TMP/skeys" --timeout 3 "$TMP/sreg.json" "$TMP/s1.json" "$TMP/s2.json" \
  "$TMP/s3.json" "$TMP/s4.json" >"$TMP/out" 2>&1; set -e
grep -q "\"base\":$((hi + 1))," "$TMP/out" || { cat "$TMP/out" >&2; fail "evil not numbered after s2"; }
grep -q "none of this process's instances" "$TMP/out" || fail "a foreign instance address accepted"
grep -q "'to' is no node" "$TMP/out" || fail "a bad node accepted"
grep -q "run: no such task" "$TMP/out" || fail "a run of no task accepted"
grep -q "sched_register: a name of 1" "$TMP/out" || fail "a bad registration accepted"
kill -0 "$MASTER" || fail "the master died"
e=$("$HRM" submit --count 4 -- true) || fail "submit after the bad messages"
expect_exit 0 timeout 120 "$HRM" wait "$e"

# Bad flags: clear messages, exit 2.
expect_exit 2 timeout 60 "$HRM" sched --name ""
expect_exit 2 timeout 60 "$HRM" sched --instances 0
expect_exit 2 "$HRM" keygen "$TMP/k2" --force --add-scheduler
expect_exit 2 timeout 60 "$HRM" up --nodes 1 --state "$TMP/u" --sched-procs 1
grep -q "needs a distributed --policy" "$TMP/err" || fail "--sched-procs with a central policy"

# A client key is no scheduler's.
echo '{"v":1,"type":"sched_register","name":"evil","instances":1}' >"$TMP/reg.json"
expect_exit 0 "$HRM" raw "$TMP/reg.json"
grep -q '"code":"forbidden"' "$TMP/out" || fail "a client registered as a scheduler process"
