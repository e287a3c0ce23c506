# hrm events: a job's life in order (submitted, started, task started/ended, finished with its state and exit), a retry after a failure with its reason, a cancel, a stream task's restart; the table; bad flags refused by name.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --max-attempts 2
start_agent n1 --cpus 4 --mem 4G
until_ok 60 nodes_up 1 || fail "node did not register"

ok=$("$HRM" submit --count 2 -- true) || fail "submit ok"
expect_exit 0 timeout 120 "$HRM" wait "$ok"
bad=$("$HRM" submit -- sh -c 'exit 3') || fail "submit bad"
expect_exit 3 timeout 120 "$HRM" wait "$bad"
long=$("$HRM" submit -- sleep 60.2001) || fail "submit long"
until_ok 60 started "$long" 1 || fail "long job never started"
expect_exit 0 "$HRM" cancel "$long"

expect_exit 0 "$HRM" events --json
cp "$TMP/out" "$TMP/events.jsonl"
# kinds JOB: the job's events, one "kind[:detail]" a line, in sequence order
kinds() {
  python3 - "$TMP/events.jsonl" "$1" <<'P'
import json, sys
last = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    assert e["seq"] > last, "sequence not increasing: %d after %d" % (e["seq"], last)
    last = e["seq"]
    if e["job"] != int(sys.argv[2]):
        continue
    d = e["detail"]
    extra = {"task_ended": lambda: "exit=%d" % d["exit"],
             "task_retried": lambda: d["reason"],
             "job_finished": lambda: "%s,%d" % (d["state"], d["exit"])}.get(e["kind"])
    print(e["kind"] + (":" + extra() if extra else ""), "n1" if e["node"] == "n1" else e["node"] or "-")
P
}
kinds "$ok" >"$TMP/ok"
cat >"$TMP/ok.want" <<'W'
job_submitted -
job_started -
task_started n1
task_started n1
task_ended:exit=0 n1
task_ended:exit=0 n1
job_finished:done,0 -
W
diff "$TMP/ok.want" "$TMP/ok" >&2 || fail "events of a job that succeeded"
kinds "$bad" >"$TMP/bad"
cat >"$TMP/bad.want" <<'W'
job_submitted -
job_started -
task_started n1
task_ended:exit=3 n1
task_retried:failure n1
task_started n1
task_ended:exit=3 n1
job_finished:failed,3 -
W
diff "$TMP/bad.want" "$TMP/bad" >&2 || fail "events of a job that failed after a retry"
kinds "$long" | matches -x "job_cancelled -" || fail "no job_cancelled event"
# A stream task that exits is restarted: task_restarted, with its count.
svc=$("$HRM" submit --kind stream -- sh -c 'exit 0') || fail "submit stream"
restarted() { "$HRM" events --json | matches "\"job\":$svc,\"kind\":\"task_restarted\""; }
until_ok 60 restarted || fail "no task_restarted event"
"$HRM" events --json >"$TMP/svc.jsonl"
grep "\"job\":$svc,\"kind\":\"task_restarted\"" "$TMP/svc.jsonl" >"$TMP/svc.restarts"
head -1 "$TMP/svc.restarts" | matches '"restarts":1' || fail "the first restart's count"
expect_exit 0 "$HRM" cancel "$svc"
grep '"kind":"node_up"' "$TMP/events.jsonl" | matches '"reason":"registration"' ||
  fail "no node_up event for the registration"

# The table: a header and a row per event.
expect_exit 0 "$HRM" events
head -1 "$TMP/out" | matches -E '^ +SEQ +TIME +KIND +JOB +TASK +NODE +DETAIL$' || fail "table header"
matches -E "^ +[0-9]+  [0-9-]+T[0-9:.]+Z +job_finished +$ok +- +- +\{.*\"state\":\"done\"" "$TMP/out" ||
  { cat "$TMP/out" >&2; fail "table row of job_finished"; }

# Bad flags: exit 2, the flag named.
expect_exit 2 "$HRM" events --since -1
matches -- "--since" "$TMP/err" || fail "negative --since not named"
expect_exit 2 "$HRM" events --limit 0
matches -- "--limit" "$TMP/err" || fail "--limit 0 not named"
expect_exit 2 "$HRM" events --limit 99999999999
matches -- "--limit" "$TMP/err" || fail "huge --limit not named"
expect_exit 2 "$HRM" events --bogus
matches -- "bogus" "$TMP/err" || fail "unknown flag not named"
expect_exit 0 "$HRM" events --help
for f in --since --limit --follow --json; do matches -- "$f" "$TMP/out" || fail "--help lacks $f"; done
echo ok
