# FGM learns from a real run and keeps it in the store: after a task that burns CPU ends, hrm job shows per task its request, FGM's estimate (learned from the usage samples) and the measured peaks; a restarted master shows the same estimate, read back from hrm.db; the estimate goes to every task of the same command, in another job.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --policy fgm
start_agent n1 --cpus 2 --mem 2G --usage-period 200ms
until_ok 60 nodes_up 1 || fail "n1 did not register"

# Burns CPU until the test says stop (after the agent has sampled it), then exits 0.
cat >"$TMP/burn.sh" <<'X'
while [ ! -e "$1" ]; do i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done; done
X
task_json() { # JOB: task 0 of the job, as JSON
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); print(json.dumps(j["tasks"][0], sort_keys=True))'
}
field() { # JOB EXPR: a Python expression over task t
  task_json "$1" | python3 -c 'import json, sys; t = json.load(sys.stdin); print(eval(sys.argv[1]))' "$2"
}
sampled() { [ "$(field "$1" 't["cpu_peak"]')" -gt 0 ]; }

job=$("$HRM" submit --cpus 1 --mem 256M -- sh "$TMP/burn.sh" "$TMP/stop") || fail "submit"
until_ok 60 sampled "$job" || fail "no usage sample of the task reached the master: $(task_json "$job")"
touch "$TMP/stop"
expect_exit 0 "$HRM" wait "$job"

[ "$(field "$job" 't["request"]["cpu"]')" = 1000 ] || fail "request cpu: $(task_json "$job")"
[ "$(field "$job" 't["request"]["mem"]')" = 268435456 ] || fail "request mem: $(task_json "$job")"
[ "$(field "$job" 't["estimate"] is not None and t["estimate"]["runs"] == 1')" = True ] ||
  fail "no estimate learned from the run: $(task_json "$job")"
[ "$(field "$job" '0 < t["estimate"]["cpu"] <= 2200 and t["estimate"]["mem"] > 0 and t["estimate"]["duration_us"] > 0')" = True ] ||
  fail "estimate out of range: $(task_json "$job")"
[ "$(field "$job" 't["rss_peak"] > 0 and t["cpu_peak"] > 0')" = True ] || fail "peaks: $(task_json "$job")"
before=$(field "$job" 'json.dumps(t["estimate"], sort_keys=True)')
# The table says the same: request, estimate and peak as CPUS/MEM.
"$HRM" job "$job" >"$TMP/job.txt" || fail "hrm job"
grep -Eq "REQUEST +ESTIMATE +PEAK" "$TMP/job.txt" || fail "no request/estimate/peak columns: $(cat "$TMP/job.txt")"
grep -Eq "^ +0 +done .* 1\.00/256M +[0-9]+\.[0-9]{2}/[0-9]+M +[0-9]+\.[0-9]{2}/[0-9]+M" "$TMP/job.txt" ||
  fail "task row: $(cat "$TMP/job.txt")"

kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true
start_master --policy fgm
until_ok 60 nodes_up 1 || fail "n1 did not come back"
has_estimate() { [ "$(field "$job" 't["estimate"] is not None')" = True ]; }
until_ok 60 has_estimate || fail "the restarted master forgot the estimate: $(task_json "$job")"
grep -q "FGM history: 1 similar-task profiles from the store" "$TMP/master.log" ||
  fail "the restarted master did not read its history from the store"
after=$(field "$job" 'json.dumps(t["estimate"], sort_keys=True)')
[ "$after" = "$before" ] || fail "estimate before the restart $before, after $after"

# The same command in another job has that estimate while it runs (similar by command).
rm "$TMP/stop"
other=$("$HRM" submit --cpus 1 --mem 256M -- sh "$TMP/burn.sh" "$TMP/stop") || fail "submit other"
until_ok 60 started "$other" 1 || fail "the second job did not start"
[ "$(field "$other" 'json.dumps(t["estimate"], sort_keys=True)')" = "$before" ] ||
  fail "two jobs of one command disagree: $(task_json "$other")"
touch "$TMP/stop"
expect_exit 0 "$HRM" wait "$other"
echo ok
