#!/usr/bin/env bash
# An agent's loop reaps (wait4) only in a turn that read a SIGCHLD from its signalfd: a turn
# made for a launch, a launch that is back or a timer costs no wait4 that can find nothing
# (docs/runtime.md, "What the agent does with a task").  Every child's exit raises a SIGCHLD
# after the last wait4 that missed it, so no task is left unreaped: every task ends.  The
# agent's main thread is traced with strace (its threads and tasks are not): each wait4 must
# follow a read of signalfd records (128 bytes each) with no poll between them.  (The agent's
# waitpid for the node bench it forks at start waits for one pid: it is not counted.)
. "$(dirname "$0")/rtlib.sh"
need strace timeout
keygen
start_master
start_agent_traced n1 -e trace=poll,ppoll,read,wait4 -- --cpus 4 --mem 2G --no-cgroup
agent=$AGENT
# Short tasks (most end before their launch is taken back) and longer ones, side by side.
short=$("$HRM" submit --count 40 --cpus 1 -- true) || fail "submit short"
long=$("$HRM" submit --count 6 --cpus 1 -- sleep 0.3) || fail "submit long"
expect_exit 0 timeout 120 "$HRM" wait "$short"
expect_exit 0 timeout 120 "$HRM" wait "$long"
kill -TERM "$agent"
until_ok 60 no_process -P "$TRACER" || fail "the agent did not stop"
wait "$TRACER" || true # strace ends with its tracee: the trace is complete
python3 - "$TMP/n1.strace" <<'PY' || fail "the agent reaped outside a SIGCHLD's turn (above)"
import re, sys
sig = False
reaped = reads = bad = 0
for line in open(sys.argv[1], errors="replace"):
    if re.match(r"p?poll\(", line):
        sig = False
    elif re.match(r"read\(\d+, .*, (128|256|384|512)\) = (128|256|384|512)$", line.strip()):
        sig, reads = True, reads + 1
    elif line.startswith("wait4(-1,"):  # the loop's reaps (not the start's bench's waitpid)
        if not sig:
            bad += 1
            if bad <= 3:
                print("a wait4 in a turn without a SIGCHLD:", line.strip())
        if re.search(r"\) = [1-9]\d*$", line.strip()):
            reaped += 1
print(f"{reaped} children reaped, {reads} SIGCHLD records read, {bad} wait4 outside them")
if reaped < 46 or reads < 1:
    print("expected every one of the 46 tasks reaped after a SIGCHLD")
    sys.exit(1)
sys.exit(1 if bad else 0)
PY
echo ok
