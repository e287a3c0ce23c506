# A job's start (`hrm job --json`'s start_us, the listing's WAIT) is the earliest start its
# agents reported, not the time the master sent a launch: the two differ by the launch's trip and
# the child's start.  So it equals its earliest task's start, and it is the same after a restart,
# which reads the starts the tasks' rows kept.  (Before, the sending time stood for the job's
# start while the master ran, and the reported one after a restart.)
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 4 --mem 4G
until_ok 60 nodes_up 1 || fail "node did not register"
ids=()
for i in 1 2 3; do
  j=$("$HRM" submit --no-output -- true) || fail "submit $i"
  ids+=("$j")
done
j=$("$HRM" submit --no-output --count 12 --cpus 250m -- true) || fail "submit the 12-task job"
ids+=("$j")
for j in "${ids[@]}"; do expect_exit 0 timeout 120 "$HRM" wait "$j"; done

# job_starts FILE: per job "ID JOB_START EARLIEST_TASK_START"
job_starts() {
  for j in "${ids[@]}"; do "$HRM" job "$j" --all --json || fail "hrm job $j"; echo; done |
    python3 -c 'import json, sys
dec = json.JSONDecoder(); text = sys.stdin.read().strip(); at = 0
while at < len(text):
    d, at = dec.raw_decode(text, at)
    while at < len(text) and text[at].isspace(): at += 1
    j = d.get("job", d)
    print(j["id"], j["start_us"], min(t["start_us"] for t in j["tasks"]))' >"$1" || fail "cannot read the jobs"
}
job_starts "$TMP/running"
python3 - "$TMP/running" <<'P' || fail "a job's start is not its earliest task's: $(cat "$TMP/running")"
import sys
for line in open(sys.argv[1]):
    job, start, first = map(int, line.split())
    assert start > 0 and start == first, line
P
kill -TERM "$MASTER"; until_ok 60 sh -c "! kill -0 $MASTER" || fail "master did not stop"
start_master
job_starts "$TMP/restarted"
cmp -s "$TMP/running" "$TMP/restarted" ||
  fail "the jobs' starts moved with the restart: $(diff "$TMP/running" "$TMP/restarted")"
echo ok
