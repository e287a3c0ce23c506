#!/usr/bin/env bash
# An agent's loop waits with one poll(2) of its three descriptors (ZeroMQ's, the signalfd, the
# launcher's), after one look at ZeroMQ's mailbox, where zmq_poll polled twice per wait (first
# without waiting, then with the wait): a wait that times out costs one poll of the three
# (docs/runtime.md, "What the agent does with a task").  The loop is traced with strace (its
# main thread only) while it idles between heartbeats and while tasks run: its polls of three
# descriptors without a wait (timeout 0) must be fewer than half of those with one; every task
# still ends, and a message that came with the mailbox's commands is not missed (the tasks are
# launched while the loop waits).
. "$(dirname "$0")/rtlib.sh"
need strace timeout
keygen
start_master
start_agent_traced n1 -e trace=poll -- --cpus 4 --mem 2G --no-cgroup
agent=$AGENT
mkdir -p "$TMP/runs"
# waits_with_timeout N: the trace holds N polls of three descriptors that waited
waits_with_timeout() {
  [ "$(grep -cE '^poll\(\[[^]]*\], 3, [1-9][0-9]*\)' "$TMP/n1.strace")" -ge "$1" ]
}
until_ok 60 waits_with_timeout 20 || fail "the agent's loop did not wait 20 times"
j=$("$HRM" submit --count 12 --cpus 1 -- sh -c "echo x >> $TMP/runs/w-\$HRM_TASK_ID") || fail "submit"
expect_exit 0 timeout 120 "$HRM" wait "$j"
ran_once w 12 "the tasks launched while the loop waited"
kill -TERM "$agent"
until_ok 60 no_process -P "$TRACER" || fail "the agent did not stop"
wait "$TRACER" || true
python3 - "$TMP/n1.strace" <<'PY' || fail "the loop's waits poll its descriptors twice (above)"
import re, sys
zero = timed = 0
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"poll\(\[[^]]*\], 3, (\d+)\)", line)
    if m:
        if int(m.group(1)) == 0:
            zero += 1
        else:
            timed += 1
print(f"polls of the loop's three descriptors: {timed} with a wait, {zero} without")
sys.exit(0 if timed >= 20 and 2 * zero < timed else 1)
PY
echo ok
