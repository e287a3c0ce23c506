# A scheduler process of hrm-shared killed with SIGKILL mid-run loses nothing: hrm up restarts it, the jobs it held are planned again from the master's table, and every task of every job runs exactly once.
. "$(dirname "$0")/rtlib.sh"
up_two_scheds 2 --cpus 2 --policy hrm-shared --param instances=4 --param t_job_ms=200 \
  --log-level debug
mkdir -p "$TMP/runs"
# 4 CPUs, 40 tasks held until the gate opens: most of them wait in the instances when one dies.
ids=()
for i in $(seq 10); do
  ids+=("$("$HRM" submit --count 4 --cpus 1 -- sh -c "echo x >> $TMP/runs/k$i-\$HRM_TASK_ID; while [ ! -e $TMP/go ]; do sleep 0.05; done")") \
    || fail "submit k$i"
done
M="$U/logs/master.log"
held_by() { grep -q "job $1 (.*) to instance [0-9]* of $2" "$M"; }
all_sent() { local id; for id in "${ids[@]}"; do grep -q "job $id (.*) to instance" "$M" || return 1; done; }
until_ok 60 all_sent || fail "the jobs never reached an instance"
s1=0; for id in "${ids[@]}"; do held_by "$id" sched1 && s1=$((s1 + 1)); done
[ "$s1" -ge 1 ] || fail "sched1 was given none of the 10 jobs"
until_ok 60 sh -c "[ \$(ls $TMP/runs | wc -l) -eq 4 ]" || fail "the first 4 tasks did not start"
pid=$(pgrep -f "sched --state $U --name sched1 ") || fail "no sched1 process"
kill -KILL "$pid"
# hrm up restarts it with the master's backoff; its jobs go to an instance again.
until_ok 60 grep -q "restarting sched1 in" "$TMP/up.err" || fail "sched1 not restarted: $(cat "$TMP/up.err")"
until_ok 60 grep -q "scheduler process sched1 is gone" "$M" || fail "the master did not move sched1's jobs"
until_ok 60 sh -c "[ \$(grep -c 'registered with the master' $U/logs/sched1.log) -ge 2 ]" \
  || fail "sched1 did not register again"
[ "$(ls "$TMP/runs" | wc -l)" -eq 4 ] || fail "more than 4 tasks run on 4 CPUs: $(ls "$TMP/runs")"
touch "$TMP/go"
for id in "${ids[@]}"; do expect_exit 0 timeout 180 "$HRM" wait "$id"; done
for i in $(seq 10); do ran_once "k$i" 4 "job k$i"; done
expect_exit 0 "$HRM" stats --json
python3 - "$TMP/out" <<'PY' || fail "hrm stats: $(cat "$TMP/out")"
import json, sys
s = json.load(open(sys.argv[1]))["shared"]
assert s["committed"] == 40, s
PY
