#!/usr/bin/env bash
# An agent's loop leaves its signalfd out of its wait for a gap after each reap while tasks
# still run, so short tasks that end one after another are reaped together, in a turn made
# anyway or once the gap is over, and their ends share a frame (docs/runtime.md, "What the
# agent does with a task").  The loop is traced with strace (its main thread only): after
# every reap (a wait4(-1) that returned a child) while two long tasks run, the loop's next
# wait (a poll of its three descriptors) must not watch the signalfd (fd -1 in its place).
# Nothing is lost to the gap: every short task ends with its own output, a task whose working
# directory is missing fails with the child's reason, and the long tasks, cancelled, end.
# A gap over 1 s, or one that is not a duration, is refused.
. "$(dirname "$0")/rtlib.sh"
need strace timeout
# --reap-gap's bad input: a usage error that says why
expect_exit 2 "$HRM" agent --reap-gap 2s --check
grep -q "at most 1s" "$TMP/err" || fail "--reap-gap 2s: $(cat "$TMP/err")"
expect_exit 2 "$HRM" agent --reap-gap 5x --check
grep -q "expected a duration" "$TMP/err" || fail "--reap-gap 5x: $(cat "$TMP/err")"
keygen
start_master
start_agent_traced n1 -e trace=poll,read,wait4 -- --cpus 8 --mem 2G --no-cgroup --reap-gap 250ms
agent=$AGENT
mkdir -p "$TMP/runs"
long=$("$HRM" submit --count 2 --cpus 1 -- sleep 600) || fail "submit long"
until_ok 60 started "$long" 2 || fail "the long tasks did not start"
short=$("$HRM" submit --count 30 --cpus 1 -- sh -c "echo \$HRM_TASK_ID > $TMP/runs/s-\$HRM_TASK_ID") ||
  fail "submit short"
nocwd=$("$HRM" submit --cwd "$TMP/no-such-dir" --cpus 1 -- true) || fail "submit nocwd"
expect_exit 0 timeout 120 "$HRM" wait "$short"
expect_exit 127 timeout 120 "$HRM" wait "$nocwd"
"$HRM" job "$nocwd" --all --json >"$TMP/nocwd.json" || fail "job nocwd"
grep -q "no-such-dir" "$TMP/nocwd.json" || fail "no child's reason for the missing folder: $(cat "$TMP/nocwd.json")"
grep -q "No such file or directory" "$TMP/nocwd.json" || fail "no errno text: $(cat "$TMP/nocwd.json")"
for i in $(seq 0 29); do
  [ "$(cat "$TMP/runs/s-$i" 2>/dev/null)" = "$i" ] || fail "short task $i: no output of its own"
done
"$HRM" cancel "$long" >/dev/null || fail "cancel long"
until_ok 60 job_state "$long" cancelled || fail "the long tasks did not end at their cancel"
kill -TERM "$agent"
until_ok 60 no_process -P "$TRACER" || fail "the agent did not stop"
wait "$TRACER" || true # strace ends with its tracee: the trace is complete
python3 - "$TMP/n1.strace" <<'PY' || fail "a reap with tasks left running was followed by a wait on the signalfd (above)"
import re, sys
sigfd = None
lines = open(sys.argv[1], errors="replace").read().splitlines()
last = None
for line in lines:  # the signalfd: whose whole 128-byte records the loop read before its first reap
    m = re.match(r"read\((\d+), .*, (\d+)\) = (\d+)$", line.strip())
    if m and int(m.group(2)) <= 1024 and int(m.group(2)) % 128 == 0 and int(m.group(3)) % 128 == 0 and int(m.group(3)) > 0:
        last = m.group(1)
    elif line.startswith("wait4(-1,") and last is not None:
        sigfd = last
        break
if sigfd is None:
    print("no signalfd read in the trace"); sys.exit(1)
reaps, watched, pending = 0, 0, False
waits = [0, 0]  # the loop's waits: watching the signalfd, not watching it
for line in lines:
    if line.startswith("wait4(-1,") and re.search(r"\) = [1-9]\d*$", line.strip()):
        reaps, pending = reaps + 1, True
        continue
    # strace writes a left-out descriptor as {fd=-1}
    m = re.match(r"poll\(\[\{fd=-?\d+[^}]*\}, \{fd=(-?\d+)[^}]*\}, \{fd=-?\d+[^}]*\}\], 3,", line)
    if not m:
        continue
    on = m.group(1) == sigfd
    waits[0 if on else 1] += 1
    if pending and on:
        watched += 1
    pending = False
print(f"signalfd {sigfd}: {reaps} children reaped; loop waits {waits[0]} watching it, {waits[1]} in a gap; {watched} right after a reap")
# The reaps of the last long task (and of the first, when both end in separate turns) leave
# fewer runs; only the one that leaves none is followed by a wait on the signalfd.
if reaps < 32:
    print("expected the 32 tasks reaped"); sys.exit(1)
sys.exit(1 if watched > 1 or waits[1] == 0 else 0)
PY
grep -q "agent loop: .* turns, .* reaping" "$TMP/n1.log" || fail "no loop counts in the agent's log"
echo ok
