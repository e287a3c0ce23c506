# Scheduler instances in processes of their own (hrm sched): jobs wait for one, run through them, move to another when one dies with SIGKILL, and survive a master restart; a central master refuses them.
. "$(dirname "$0")/rtlib.sh"
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

MFLAGS=(--policy dhrm-batch --local-instances 0 --node-timeout 2s --reconcile 3s)
start_master "${MFLAGS[@]}"
start_agent n1 --cpus 2
start_agent n2 --cpus 2
until_ok 20 nodes_up 2 || fail "nodes did not register"
mkdir -p "$TMP/runs"

# No instance anywhere yet: a job waits, pending; a scheduler process arrives and runs it.
w=$("$HRM" submit --count 4 -- sh -c "echo x >> $TMP/runs/w-\$HRM_TASK_ID") || fail "submit w"
sleep 1
"$HRM" job "$w" --json | grep -q '"pending": 4' || fail "the job did not wait for an instance"
start_sched s1 2
until_ok 20 registered s1 || fail "s1 did not register"
expect_exit 0 timeout 30 "$HRM" wait "$w"
ran_once w 4 "the job that waited for an instance"

# Two processes share the jobs; one dies with SIGKILL mid-load and its jobs move to the other.
start_sched s2 2
until_ok 20 registered s2 || fail "s2 did not register"
ids=()
for i in $(seq 10); do
  ids+=("$("$HRM" submit --count 20 --cpus 500m -- sh -c "echo x >> $TMP/runs/k$i-\$HRM_TASK_ID; sleep 0.2")") \
    || fail "submit k$i"
done
sleep 0.5
kill -KILL "$SCHED_s1"
for id in "${ids[@]}"; do expect_exit 0 timeout 90 "$HRM" wait "$id"; done
for i in $(seq 10); do ran_once "k$i" 20 "job k$i"; done
until_ok 10 grep -q "scheduler process s1 is gone" "$TMP/master.log" || fail "s1's death not noticed"
grep -q "instances 2..3" "$TMP/s2.log" || fail "s2 did not get the next instance numbers"

# The master dies with SIGKILL mid-load: s2 registers with the new one, nothing is lost or rerun.
r=$("$HRM" submit --count 20 --cpus 500m -- sh -c "echo x >> $TMP/runs/r-\$HRM_TASK_ID; sleep 0.3") || fail "submit r"
sleep 0.4
kill -KILL "$MASTER"
sleep 0.3
start_master "${MFLAGS[@]}"
until_ok 30 nodes_up 2 || fail "agents did not come back"
expect_exit 0 timeout 90 "$HRM" wait "$r"
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
expect_exit 0 timeout 60 "$HRM" wait "$e"

# Bad flags: clear messages, exit 2.
expect_exit 2 "$HRM" sched --name ""
expect_exit 2 "$HRM" sched --instances 0
expect_exit 2 "$HRM" keygen "$TMP/k2" --force --add-scheduler
expect_exit 2 "$HRM" up --nodes 1 --state "$TMP/u" --sched-procs 1
grep -q "needs a distributed --policy" "$TMP/err" || fail "--sched-procs with a central policy"

# A client key is no scheduler's.
echo '{"v":1,"type":"sched_register","name":"evil","instances":1}' >"$TMP/reg.json"
expect_exit 0 "$HRM" raw "$TMP/reg.json"
grep -q '"code":"forbidden"' "$TMP/out" || fail "a client registered as a scheduler process"
