# Helpers for the runtime tests: daemons on 127.0.0.1 with state in $TMP, every wait bounded, all stopped on exit.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 1 # beside this file, wherever it is sourced from
need pgrep python3
S="$TMP/state"
export HRM_STATE="$S"
PIDS=()
rt_cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rt_cgroups_clean
  rt_leftovers
}
# Processes still running with this test's folder in their command line once its daemons are
# stopped (a daemon started in a way that left its pid out of PIDS, a task its agent did not
# stop): killed, and the test fails (RT_LEFT), since each would live on after the test.
rt_leftovers() {
  local left _
  for _ in $(seq 50); do
    left=$(pgrep -f -- "$TMP/" || true)
    [ -n "$left" ] || return 0
    sleep 0.1
  done
  echo "FAIL: left running after the test: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)" 2>/dev/null)" >&2
  kill -KILL $left 2>/dev/null || true
  RT_LEFT=1
}
# The cgroups of this test's clusters (hrm/<sha256 of master.pub, 12 hex digits>/...): an agent
# killed with SIGKILL leaves its tasks and their folders, and every test has a cluster of its
# own, so no later agent sweeps them.  Their processes are killed (thawed first) and the folders
# removed, deepest first, for a bounded while.
rt_cgroups_clean() {
  local pub id d f tries
  for pub in $(find "$TMP" -name master.pub 2>/dev/null); do
    id=$(tr -d '\n' <"$pub" | sha256sum | cut -c1-12)
    for d in /sys/fs/cgroup/*/hrm/"$id"; do
      [ -d "$d" ] || continue
      for f in $(find "$d" -name freezer.state 2>/dev/null); do echo THAWED >"$f" 2>/dev/null || true; done
      for tries in $(seq 20); do
        find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
        find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
        [ -d "$d" ] || break
        sleep 0.1
      done
    done
  done
}
trap 'rt_cleanup; rm -rf "$TMP"; [ -z "${RT_LEFT:-}" ] || exit 1' EXIT
# on_fail: show the daemons' logs when a test fails
show_logs() { for f in "$TMP"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -25 "$f"; }; done >&2; }
fail() { echo "FAIL: $*" >&2; show_logs; exit 1; }
# until_ok SECONDS CMD...: retries CMD every 0.1 s until it succeeds or time runs out
until_ok() {
  local t=$1; shift
  local end=$((SECONDS + t))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.1
  done
}
# ran_once PREFIX N WHAT: the tasks writing $TMP/runs/PREFIX-<task> (one line per run) number
# N and each ran exactly once
ran_once() {
  local f n
  for f in "$TMP"/runs/"$1"-*; do
    [ -e "$f" ] || break
    n=$(wc -l <"$f"); [ "$n" -eq 1 ] || fail "$(basename "$f") ran $n times"
  done
  n=$(find "$TMP/runs" -maxdepth 1 -name "$1-*" | wc -l)
  [ "$n" -eq "$2" ] || fail "$3: $n of $2 tasks ran"
}
# started JOB N: exactly N of the job's tasks have started (placed and not waiting in a queue)
started() {
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
sys.exit(0 if j["running"] - j["queued"] == int(sys.argv[1]) else 1)' "$2"
}
keygen() { "$HRM" keygen >/dev/null || fail "keygen"; }
started_since() { [ "$(starts)" -gt "$1" ]; }
starts() { grep -c "master up on" "$TMP/master.log" 2>/dev/null || true; }
start_master() { # extra flags...
  local before; before=$(starts)
  "$HRM" master --state "$S" --log-level info "$@" >>"$TMP/master.log" 2>&1 &
  MASTER=$!; PIDS+=("$MASTER")
  until_ok 60 started_since "${before:-0}" || fail "master did not start"
}
start_agent() { # name flags...: with a key of its own, made if missing (the master re-reads authorized)
  local name=$1; shift
  [ -e "$S/keys/agent-$name.key" ] || "$HRM" keygen --node "$name" "$S/keys" >/dev/null || fail "keygen --node $name"
  "$HRM" agent --state "$S" --name "$name" --log-level info "$@" >>"$TMP/$name.log" 2>&1 &
  local pid=$!; PIDS+=("$pid")
  eval "AGENT_$name=$pid"
}
nodes_up() { [ "$("$HRM" nodes --json 2>/dev/null | grep -c '"state": "up"')" -ge "$1" ]; }
# job_state JOB STATE: the job is in STATE (done, cancelled, ...)
job_state() { "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); sys.exit(0 if j["state"] == sys.argv[1] else 1)' "$2"; }
# lease_hold NAME SRC: a task's execve made slow, not waited for: $TMP/NAME, a copy of the
# program SRC, under a write lease; the helper writes $TMP/NAME.waiting when an execve of it
# waits, and lets go once $TMP/NAME.go exists.  The kernel breaks a lease by itself after
# /proc/sys/fs/lease-break-time (45 s by default): every wait that expects the agent to go on
# meanwhile must be bounded well under it.
lease_hold() {
  cp "$2" "$TMP/$1" && chmod 755 "$TMP/$1"
  python3 - "$TMP/$1" >>"$TMP/lease-$1.log" 2>&1 <<'EOF' &
import fcntl, os, signal, sys, time
path = sys.argv[1]
signal.signal(signal.SIGIO, lambda *_: open(path + ".waiting", "w").close())
fd = os.open(path, os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
open(path + ".held", "w").close()
deadline = time.monotonic() + 300
while not os.path.exists(path + ".go") and time.monotonic() < deadline:
    time.sleep(0.05)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
EOF
  PIDS+=("$!")
  until_ok 60 test -e "$TMP/$1.held" || fail "no lease on $1: $(cat "$TMP/lease-$1.log")"
}
# start_agent_traced NAME STRACE-FLAGS... -- AGENT-FLAGS...: agent NAME (key made here) under
# strace STRACE-FLAGS, which writes $TMP/NAME.strace; strace's pid in TRACER (and PIDS), the
# agent's in AGENT once it has registered with the master.  LeakSanitizer cannot run under
# ptrace: the traced agent's leaks are left to the other tests.
start_agent_traced() {
  local name=$1 sflags=(); shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do sflags+=("$1"); shift; done
  shift
  "$HRM" keygen --node "$name" "$S/keys" >/dev/null || fail "keygen --node $name"
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -qq -o "$TMP/$name.strace" "${sflags[@]}" "$HRM" agent --state "$S" --name "$name" \
    --log-level info "$@" >>"$TMP/$name.log" 2>&1 &
  TRACER=$!; PIDS+=("$TRACER")
  until_ok 60 nodes_up 1 || fail "node $name did not register"
  AGENT=$(pgrep -P "$TRACER") || fail "no agent under strace"
}
# start_fleet N PREFIX AGENT-FLAGS...: N simulated agents PREFIX1..PREFIXN (their keys made here)
# in one process (pid in FLEET), logging to $TMP/fleet.log; waits until all N are up
start_fleet() {
  local n=$1 prefix=$2; shift 2
  "$HRM" keygen --node "$prefix" --node-count "$n" "$S/keys" >/dev/null || fail "keygen --node-count"
  "$HRM" agent --state "$S" --simulate-exec --count "$n" --name-prefix "$prefix" "$@" \
    >>"$TMP/fleet.log" 2>&1 &
  FLEET=$!; PIDS+=("$FLEET")
  until_ok 120 nodes_up "$n" || fail "not all $n agents registered"
}
# start_sched NAME SCHED-FLAGS...: an hrm sched process (pid in SCHED, log $TMP/NAME.log), once it
# has registered with the master
start_sched() {
  local name=$1; shift
  "$HRM" sched --state "$S" --name "$name" --log-level info "$@" >>"$TMP/$name.log" 2>&1 &
  SCHED=$!; PIDS+=("$SCHED")
  until_ok 60 grep -q "registered with the master" "$TMP/$name.log" || fail "$name did not register"
}
# run_tasks PREFIX N WHAT: a job of N one-CPU tasks, each appending a line to
# $TMP/runs/PREFIX-<task>, waited for; each ran exactly once (ran_once).  Its id in JOB.
run_tasks() {
  mkdir -p "$TMP/runs"
  JOB=$("$HRM" submit --count "$2" --cpus 1 -- sh -c "echo x >> $TMP/runs/$1-\$HRM_TASK_ID") ||
    fail "submit"
  expect_exit 0 timeout 120 "$HRM" wait "$JOB"
  ran_once "$1" "$2" "$3"
}
# sigkill_sweep PID NODE N1 N2 RESTART-CMD...: a task with a background grandchild (sleep N1.M)
# and a setsid'ed one (sleep N2.M; M=$$$RANDOM, unique to the test) runs on agent PID; the agent
# is SIGKILLed and both live on (the task's main process dies with the agent); the task is
# cancelled (else the master places it again) and RESTART-CMD starts the agent again, which
# kills them and reports the group it swept.
sigkill_sweep() {
  local pid=$1 node=$2 n1=$3 n2=$4 m="$$$RANDOM" j; shift 4
  left() { pgrep -fc "^sleep ($n1|$n2)\\.$m\$" || true; }
  left_is() { [ "$(left)" -eq "$1" ]; }
  j=$("$HRM" submit -- sh -c "sleep $n1.$m & setsid sleep $n2.$m & wait") || fail "submit"
  until_ok 60 left_is 2 || fail "the grandchildren never ran ($(left))"
  kill -KILL "$pid"
  { wait "$pid"; } 2>/dev/null || true
  left_is 2 || fail "expected both grandchildren alive after the agent's SIGKILL, found $(left)"
  expect_exit 0 "$HRM" cancel "$j"
  "$@"
  until_ok 60 left_is 0 || fail "$(left) grandchild(ren) of the killed agent's task survived its restart"
  until_ok 30 grep -q "removed 1 task cgroup(s) a previous agent named $node left" "$TMP/$node.log" ||
    fail "the restarted agent did not report the cgroup it swept"
}
# direct_probes NODE...: each node's agent (started by start_agent) takes probes from scheduler
# processes on a listener of its own
direct_probes() {
  local n
  for n in "$@"; do
    until_ok 60 grep -q "probes from scheduler processes taken on tcp://127.0.0.1:" "$TMP/$n.log" ||
      fail "$n does not take probes directly: $(tail -5 "$TMP/$n.log")"
  done
}
# hrm up with two scheduler processes (sched1, sched2) in $TMP/up (HRM_STATE points there):
# waits until NODES agents are up and both processes have registered with the master.
up_two_scheds() { # NODES up-flags...
  local nodes=$1; shift
  U="$TMP/up"
  export HRM_STATE="$U"
  "$HRM" up --nodes "$nodes" --sched-procs 2 --state "$U" "$@" >"$TMP/up.out" 2>"$TMP/up.err" &
  PIDS+=("$!")
  until_ok 60 nodes_up "$nodes" || { cat "$TMP/up.err" >&2; fail "hrm up did not start"; }
  local s
  for s in sched1 sched2; do
    until_ok 60 grep -q "registered with the master" "$U/logs/$s.log" || fail "$s did not register"
  done
}
# reconciled_all N JOB: the restarted master's reconciliation is over, with N registrations or
# more handled and no run lost, and JOB's N tasks all running; JOB is cancelled
reconciled_all() {
  local n=$1 job=$2 line regs lost
  until_ok 120 grep -q "reconciliation over" "$TMP/master.log" || fail "reconciliation did not end: $(grep -c " registered" "$TMP/master.log") registrations"
  line=$(grep "reconciliation over" "$TMP/master.log")
  regs=$(echo "$line" | sed -n 's/.*(\([0-9]*\) registrations handled.*/\1/p')
  [ "${regs:-0}" -ge "$n" ] || fail "$regs registrations handled for $n agents: $line"
  lost=$(grep "registered" "$TMP/master.log" | grep -vc "; 0 lost" || true)
  [ "$lost" -eq 0 ] || fail "$lost registrations lost runs"
  started "$job" "$n" || fail "not every task runs after the restart"
  "$HRM" cancel "$job" >/dev/null || fail "cancel"
}
