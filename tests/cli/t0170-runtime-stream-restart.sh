# Stream jobs: a task that exits (any code) is restarted with a doubling backoff and never uses up --max-attempts; the job shows its kind and stays running; restarts and the backoff survive a master SIGKILL.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --reconcile 3s
start_agent n1 --cpus 2
until_ok 60 nodes_up 1 || fail "n1 did not register"
mkdir -p "$TMP/runs"
runs() { [ -e "$TMP/runs/s-0" ] && wc -l <"$TMP/runs/s-0" || echo 0; }
runs_ge() { [ "$(runs)" -ge "$1" ]; }
# task 0's restarts, latest exit, backoff and the job's state, from hrm job --json; checks that
# the backoff is the one its restart count calls for (1 s doubling) and never past 60 s
task0() {
  "$HRM" job "$1" --json | python3 -c 'import json, sys
j = json.load(sys.stdin); j = j.get("job", j); t = j["tasks"][0]
r, b = t["restarts"], t["backoff_us"]
if r > 0 and b != min(1000000 << (r - 1), 60000000):
    sys.exit("restart %d waited %d us" % (r, b))
print(j["kind"], j["state"], r, t["exit"], b)'
}

# Exits with 3 at once, every time: restarted, a failure each run, yet the job goes on.
s=$("$HRM" submit --kind stream --name svc -- sh -c "echo run >> $TMP/runs/s-\$HRM_TASK_ID; exit 3") \
  || fail "submit --kind stream"
"$HRM" jobs >"$TMP/jobs"
grep -Eq "^ +$s +svc +[^ ]+ +stream +" "$TMP/jobs" || { cat "$TMP/jobs"; fail "hrm jobs shows no KIND stream"; }
head -1 "$TMP/jobs" | matches KIND || fail "hrm jobs has no KIND column"
until_ok 60 runs_ge 3 || fail "the stream task ran $(runs) times, not restarted"
out=$(task0 "$s") || fail "task 0: $(task0 "$s" 2>&1)"
read -r kind state restarts code backoff <<<"$out"
[ "$kind" = stream ] || fail "kind '$kind'"
[ "$state" = running ] || fail "a stream job whose task keeps exiting is '$state', not running"
[ "$restarts" -ge 2 ] || fail "3 runs but $restarts restarts"
[ "$code" -eq 3 ] || fail "the latest exit is $code, not 3"
"$HRM" job "$s" >"$TMP/job"
grep -q "kind stream" "$TMP/job" || fail "hrm job does not say the kind"
grep -q "RESTARTS" "$TMP/job" || fail "hrm job shows no restart count"
# A batch job's failure stays final: --max-attempts 1 (the default) still fails it.
b=$("$HRM" submit -- sh -c 'exit 3') || fail "submit batch"
expect_exit 3 timeout 120 "$HRM" wait "$b"
[ "$("$HRM" job "$b" --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("job", j)["kind"])')" = batch ] \
  || fail "a job without --kind is not batch"

# The master dies; the restarted one goes on from the stored count and backoff.
before=$(task0 "$s" | cut -d' ' -f3)
kill -KILL "$MASTER"
wait "$MASTER" 2>/dev/null || true
start_master --reconcile 3s
until_ok 60 nodes_up 1 || fail "n1 did not re-register"
after=$(task0 "$s" | cut -d' ' -f3) || fail "after the restart: $(task0 "$s" 2>&1)"
[ "$after" -ge "$before" ] || fail "restarts went from $before to $after across a master restart"
n=$(runs)
until_ok 60 runs_ge $((n + 1)) || fail "the stream task was not restarted after the master restart"
until_ok 60 sh -c "'$HRM' job $s --json | python3 -c 'import json,sys; j=json.load(sys.stdin); j=j.get(\"job\", j); sys.exit(0 if j[\"tasks\"][0][\"restarts\"] >= $n else 1)'" \
  || fail "the count did not go on from $before"
out=$(task0 "$s") || fail "task 0 after the master restart: $(task0 "$s" 2>&1)"
read -r kind state restarts code backoff <<<"$out"
[ "$state" = running ] || fail "after the master restart the job is '$state'"
"$HRM" cancel "$s" >/dev/null || fail "cancel"
expect_exit 143 timeout 120 "$HRM" wait "$s"
