# Why a launch failed: a command not found, a missing working directory and arguments over the kernel's limit each show in hrm job, its --json and the master's log, and survive a master restart.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
# With 1 MiB of stack, execve takes at most 256 KiB of arguments (a quarter of it): the
# E2BIG case below needs no argument over the wire's string limit.
(ulimit -s 1024 && exec "$HRM" agent --state "$S" --name n1 --log-level info) >>"$TMP/n1.log" 2>&1 &
PIDS+=("$!")
until_ok 60 nodes_up 1 || fail "the node did not register"

a=$("$HRM" submit -- no-such-command-t0125) || fail "submit a"
b=$("$HRM" submit --cwd "$TMP/no-such-dir-t0125" -- true) || fail "submit b"
x=$(head -c 60000 /dev/zero | tr '\0' x)
c=$("$HRM" submit -- echo "$x" "$x" "$x" "$x" "$x" "$x" "$x") || fail "submit c"
for j in "$a" "$b" "$c"; do expect_exit 127 timeout 60 "$HRM" wait "$j"; done

# has_error JOB TEXT: task 0's launch error contains TEXT in both the listing and --json
has_error() {
  "$HRM" job "$1" >"$TMP/job" || fail "hrm job $1"
  grep -q "launch failed: .*$2" "$TMP/job" || { cat "$TMP/job" >&2; fail "hrm job $1 does not say '$2' ($3)"; }
  "$HRM" job "$1" --json | python3 -c 'import json, sys
t = json.load(sys.stdin)["tasks"][0]
sys.exit(0 if sys.argv[1] in t.get("error", "") else 1)' "$2" ||
    fail "hrm job $1 --json has no error with '$2' ($3)"
}
check_all() {
  has_error "$a" "no-such-command-t0125: command not found" "$1"
  has_error "$b" "no-such-dir-t0125" "$1"
  has_error "$c" "Argument list too long" "$1"
}
check_all "before a restart"
grep -q "failed: exit 127 .*no-such-command-t0125: command not found" "$TMP/master.log" ||
  fail "the master's log does not say why the launch failed"

kill -TERM "$MASTER"
for _ in $(seq 100); do kill -0 "$MASTER" 2>/dev/null || break; sleep 0.1; done
start_master
check_all "after a master restart"

# A task that started shows no launch error.
d=$("$HRM" submit -- true) || fail "submit d"
expect_exit 0 timeout 60 "$HRM" wait "$d"
"$HRM" job "$d" >"$TMP/job"
! grep -q "launch failed" "$TMP/job" || fail "a task that ran shows a launch error"
