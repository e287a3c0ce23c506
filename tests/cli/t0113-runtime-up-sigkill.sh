# SIGKILL under hrm up: a killed master is restarted (a running task survives and runs once, acknowledged jobs stay); a killed hrm up leaves no daemon behind.
. "$(dirname "$0")/rtlib.sh"
U="$TMP/up"
export HRM_STATE="$U"
# pids_of ROLE: this cluster's `hrm ROLE` processes (other clusters run on this host too)
pids_of() {
  local p c; for p in /proc/[0-9]*; do
    c=$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue
    case "$c" in "hrm $1 "*"--state $U "*) echo "${p#/proc/}" ;; esac
  done; return 0
}
mkdir -p "$TMP/runs"
"$HRM" up --nodes 2 --cpus 2 --state "$U" --log-level info >"$TMP/up.out" 2>"$TMP/up.err" &
up_pid=$!; PIDS+=("$up_pid")
until_ok 60 nodes_up 2 || { cat "$TMP/up.err" >&2; fail "hrm up did not start"; }

done_id=$("$HRM" submit --count 3 -- true) || fail "submit"
timeout 120 "$HRM" wait "$done_id" || fail "job $done_id failed"
# A task that runs until the test says so, and writes one line per run.
long_id=$("$HRM" submit -- sh -c "echo run >>$TMP/runs/long-\$HRM_TASK_ID; until [ -e $TMP/go ]; do sleep 0.1; done")
until_ok 60 test -s "$TMP/runs/long-0" || fail "the long task did not start"
pending_id=$("$HRM" submit --count 2 -- true) || fail "submit"

old=$(pids_of master)
[ -n "$old" ] || fail "no master"
kill -KILL "$old"
new_master() { local p; p=$(pids_of master); [ -n "$p" ] && [ "$p" != "$old" ]; }
until_ok 60 new_master || { cat "$TMP/up.err" >&2; fail "the master was not restarted"; }
kill -0 "$up_pid" || fail "hrm up stopped when its master died"
grep -q "master (pid $old) was killed by signal 9" "$TMP/up.err" || fail "no report: $(cat "$TMP/up.err")"
grep -q "restarting the master" "$TMP/up.err" || fail "no restart line: $(cat "$TMP/up.err")"

touch "$TMP/go"
timeout 120 "$HRM" wait "$long_id" || fail "the long job failed after the master restart"
timeout 120 "$HRM" wait "$pending_id" || fail "the job submitted before the crash failed"
ran_once long 1 "the running task"
"$HRM" jobs --all --json | python3 -c 'import json, sys
d = json.load(sys.stdin); jobs = d["jobs"] if isinstance(d, dict) else d
ids = sorted(j["id"] for j in jobs if j["state"] == "done")
sys.exit(0 if ids == [int(a) for a in sys.argv[1:]] else 1)' "$done_id" "$long_id" "$pending_id" \
  || fail "not every job acknowledged before the crash is done"
nodes_up 2 || fail "the agents did not come back to the new master"

# hrm up itself killed with SIGKILL: its daemons stop with it (none of this cluster is left).
daemons() { pids_of master; pids_of agent; }
no_daemons() { [ -z "$(daemons)" ]; }
sleeper=$("$HRM" submit --count 2 -- sleep 97) || fail "submit"
until_ok 60 started "$sleeper" 2 || fail "the sleepers did not start"
[ "$(daemons | wc -l)" -eq 3 ] || fail "expected a master and 2 agents: $(daemons | tr "\n" " ")"
kill -KILL "$up_pid"
until_ok 60 no_daemons || fail "daemons outlived hrm up: $(daemons | tr "\n" " ")"
# A rerun on the folder starts (nothing holds it) and finds every acknowledged job.
"$HRM" up --nodes 2 --cpus 2 --state "$U" >"$TMP/up2.out" 2>"$TMP/up2.err" &
PIDS+=("$!")
until_ok 60 nodes_up 2 || { cat "$TMP/up2.err" >&2; fail "the rerun did not start"; }
"$HRM" job "$sleeper" --json | matches "\"ntasks\": 2" || fail "job $sleeper is gone after the rerun"
"$HRM" cancel "$sleeper" >/dev/null || fail "cancel"
