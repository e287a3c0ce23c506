# Input files: a FIFO or a device is refused before it is read, a spec's tasks are checked against memory, a job over 1 MiB and control characters or HRM_ names are refused before anything is sent.
. "$(dirname "$0")/lib.sh"
need python3 mkfifo
export HRM_STATE="$TMP/nostate" # no master: everything below is refused before connecting

# A FIFO nobody writes to: refused at once (timeout makes a hang a failure, not a stuck run).
mkfifo "$TMP/fifo"
expect_exit 2 timeout 20 "$HRM" submit "$TMP/fifo"
grep -q "not a regular file (a FIFO)" "$TMP/err" || fail "submit FIFO: $(cat "$TMP/err")"
expect_exit 2 timeout 20 "$HRM" sim "$TMP/fifo"
grep -q "not a regular file (a FIFO)" "$TMP/err" || fail "sim FIFO: $(cat "$TMP/err")"
# A device that never ends: refused from fstat, not read up to the size limit.
expect_exit 2 timeout 20 "$HRM" submit /dev/zero
grep -q "not a regular file (a character device)" "$TMP/err" || fail "submit /dev/zero: $(cat "$TMP/err")"
expect_exit 2 timeout 20 "$HRM" sim /dev/zero
grep -q "not a regular file (a character device)" "$TMP/err" || fail "sim /dev/zero: $(cat "$TMP/err")"

# 50,000,000 tasks in a 191-byte spec (within the count limit): refused from the memory
# estimate before anything is built; the message names the field.
cat >"$TMP/huge.json" <<'J'
{"cluster": {"nodes": [{"name": "n", "count": 4, "cores": 8, "mem": "16G"}]},
 "workload": {"jobs": [{"name": "big", "tasks": 50000000, "task": {"cpu": 1, "mem": "1G", "duration": "1s"}}]}}
J
expect_exit 2 timeout 60 "$HRM" sim --max-mem 1G "$TMP/huge.json"
grep -q "workload.jobs\[0\].tasks: 50000000 tasks in all would need about .* GiB" "$TMP/err" ||
  fail "huge spec: $(cat "$TMP/err")"
# A generator is checked the same way, at its count.
cat >"$TMP/gen.json" <<'J'
{"cluster": {"nodes": [{"name": "n", "count": 4, "cores": 8, "mem": "16G"}]},
 "workload": {"generators": [{"name": "g", "count": 1000, "tasks": 40000, "duration": "1s", "cpu": 1, "mem": "1G"}]}}
J
expect_exit 2 timeout 60 "$HRM" sim --max-mem 1G "$TMP/gen.json"
grep -q "generators\[0\].count: .* GiB" "$TMP/err" || fail "generator: $(cat "$TMP/err")"
expect_exit 2 "$HRM" sim --max-mem lots "$TMP/huge.json"
grep -q -- "--max-mem" "$TMP/err" || fail "bad --max-mem"

# A job over 1 MiB: the client says so (before connecting), not "no answer".
python3 -c 'import json; print(json.dumps({"name": "big", "tasks": [{"cmd": ["x" * 300] * 4000}]}))' >"$TMP/bigjob.json"
expect_exit 2 timeout 20 "$HRM" submit "$TMP/bigjob.json"
grep -q "the job description is [0-9]* bytes; the limit is 1 MiB" "$TMP/err" || fail "big job: $(cat "$TMP/err")"

# Control characters in names are refused, naming the field; so are HRM_ env names.
expect_exit 2 "$HRM" submit --name "$(printf 'ok\033[31mred')" -- true
grep -q "name: must not contain control characters" "$TMP/err" || fail "name: $(cat "$TMP/err")"
expect_exit 2 "$HRM" submit --queue "$(printf 'q\ta')" -- true
grep -q "queue: must not contain control characters" "$TMP/err" || fail "queue: $(cat "$TMP/err")"
printf '{"user": "u\\u009b2J", "tasks": [{"cmd": "true"}]}' >"$TMP/c1.json"
expect_exit 2 "$HRM" submit "$TMP/c1.json"
grep -q "user: must not contain control characters" "$TMP/err" || fail "user (C1): $(cat "$TMP/err")"
expect_exit 2 "$HRM" submit --env HRM_JOB_ID=7 -- true
grep -q "tasks\[0\].env.HRM_JOB_ID: names starting with HRM_ are set by hrm" "$TMP/err" ||
  fail "env: $(cat "$TMP/err")"
echo ok
