#!/usr/bin/env bash
# An agent of the central path starts each task with clone(CLONE_VM | CLONE_CHILD_CLEARTID),
# not CLONE_VFORK: its launcher thread does not sleep until the child's execve, and the kernel
# clears the launch's gate when the child has called execve or exited (docs/runtime.md, "What
# the agent does with a task").  The launch stays the launch's until then: every task's command,
# environment and output files are its own (each writes its index to its stdout, read back with
# hrm logs), a command that cannot be executed and a working directory that does not exist are
# still reported with the child's own reason (exit 127), and a cancel of a running task kills it.
# The agent runs under strace -f (its clone calls only): every clone that makes a task (CLONE_VM
# without CLONE_THREAD) must have CLONE_CHILD_CLEARTID and no CLONE_VFORK.
. "$(dirname "$0")/rtlib.sh"
need strace timeout
keygen
start_master
start_agent_traced n1 -f -e trace=clone,clone3,vfork -e signal=none -- --cpus 4 --mem 2G --no-cgroup
agent=$AGENT

n=24
each=$("$HRM" submit --count $n --cpus 1 --env "WORD=w$n" -- sh -c 'echo "$WORD-$HRM_TASK_ID"') ||
  fail "submit each"
long=$("$HRM" submit --cpus 1 -- sleep 3025) || fail "submit long"
bad=$("$HRM" submit --cpus 1 -- "$TMP/no-such-prog") || fail "submit bad"
nodir=$("$HRM" submit --cpus 1 --cwd "$TMP/no-such-dir" -- true) || fail "submit nodir"
expect_exit 0 timeout 120 "$HRM" wait "$each"
expect_exit 127 timeout 120 "$HRM" wait "$bad"
expect_exit 127 timeout 120 "$HRM" wait "$nodir"
for i in $(seq 0 $((n - 1))); do
  out=$("$HRM" logs "$each" --task "$i") || fail "logs of task $i"
  [ "$out" = "w$n-$i" ] || fail "task $i wrote '$out', not 'w$n-$i'"
done
grep -q "could not start: cannot start: No such file or directory$" "$TMP/n1.log" ||
  fail "the agent did not give the missing program's reason"
grep -q "could not start: cannot start: No such file or directory (working directory $TMP/no-such-dir)" \
  "$TMP/n1.log" || fail "the agent did not name the missing working directory"
until_ok 60 started "$long" 1 || fail "job $long did not start"
expect_exit 0 "$HRM" cancel "$long"
expect_exit 143 timeout 120 "$HRM" wait "$long"
until_ok 60 no_process -fx 'sleep 3025' || fail "the cancelled task outlived its cancel"

kill -TERM "$agent"
until_ok 60 no_process -P "$TRACER" || fail "the agent did not stop"
wait "$TRACER" || true # strace ends with its tracee: the trace is complete
python3 - "$TMP/n1.strace" $((n + 3)) <<'PY' || fail "a task was started another way (above)"
import re, sys
tasks = bad = 0
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"\b(clone3?|vfork)\((.*)", line)
    if not m:
        continue
    call = m.group(2)
    if m.group(1) == "vfork" or ("CLONE_VM" in call and "CLONE_THREAD" not in call):
        tasks += 1
        if "CLONE_VFORK" in call or "CLONE_CHILD_CLEARTID" not in call or m.group(1) == "vfork":
            bad += 1
            if bad <= 3:
                print("a task started with its parent waiting for its execve:", line.strip())
print(f"{tasks} task clones, {bad} of them waiting for the execve or without a gate")
if tasks < int(sys.argv[2]):
    print(f"expected at least {sys.argv[2]} task clones")
    sys.exit(1)
sys.exit(1 if bad else 0)
PY
echo ok
