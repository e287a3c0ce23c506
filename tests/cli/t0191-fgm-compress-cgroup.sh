# FGM's compression reaches the kernel: once FGM has learned a command's CPU use, it packs tasks of that command by estimate and, allowed to compress, over-commits the node's cores; the master then sends each task there a task_cpu and the agent writes the task's cgroup CPU quota (cfs_quota_us or cpu.max) at its share of the cores. When the node is no longer over-committed (the other tasks ended) the quota is released to the task's request.
. "$(dirname "$0")/rtlib.sh"
keygen
# Compression allowed up to half the node, whatever formula (7) says, and no QoS veto:
# the test is about what the agent does with FGM's decision.
start_master --policy fgm --param max_compression=0.5 --param limitation=0.5 --param qos_stretch=100
start_agent n1 --cpus 2 --mem 2G --usage-period 200ms
until_ok 60 nodes_up 1 || fail "n1 did not register"
grep -Eq "cgroup v[12] " "$TMP/n1.log" || fail "this test needs cgroups (the agent found none: see n1.log)"

# Burns about half a core (a full core is learned as about 1000 milli-cores, and two such tasks
# over-commit 2 cores by less than the 2 % slack), until $1 or $1.TASK exists.
cat >"$TMP/burn.sh" <<'X'
while [ ! -e "$1" ] && [ ! -e "$1.$HRM_TASK_ID" ]; do i=0; while [ $i -lt 10000 ]; do i=$((i + 1)); done; sleep 0.01; done
X
jq_task() { # JOB TASK EXPR
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); t = j["tasks"][int(sys.argv[1])]; print(eval(sys.argv[2]))' "$2" "$3"
}
sampled() { [ "$(jq_task "$1" 0 't["cpu_peak"]')" -gt 0 ]; }
learn=$("$HRM" submit --cpus 1 --mem 64M -- sh "$TMP/burn.sh" "$TMP/stop") || fail "submit"
until_ok 60 sampled "$learn" || fail "no usage sample reached the master"
touch "$TMP/stop"
expect_exit 0 "$HRM" wait "$learn"
[ "$(jq_task "$learn" 0 't["estimate"] is not None')" = True ] || fail "nothing learned"

# From now on the agent reports no usage: FGM plans from its estimate alone, not from the
# shared machine's changing load.
kill -TERM "$AGENT_n1"; wait "$AGENT_n1" 2>/dev/null || true
start_agent n1 --cpus 2 --mem 2G --usage-period 1h
registered_twice() { [ "$(grep -c "registered with the master" "$TMP/n1.log")" -ge 2 ]; }
until_ok 60 registered_twice || fail "n1 did not come back"
rm "$TMP/stop"
n=24
job=$("$HRM" submit --cpus 1 --mem 64M --count $n -- sh "$TMP/burn.sh" "$TMP/stop") || fail "submit"
limited() { grep -q "task $job\.[0-9]*#[0-9]* on n1: cpu compressed to" "$TMP/master.log"; }
until_ok 60 limited || fail "FGM never over-committed n1 by estimate: learned $(jq_task "$learn" 0 't["estimate"]'), running $("$HRM" job "$job" --json | grep -c '"state": "running"')"
run=$(grep -o "task $job\.[0-9]*#[0-9]* on n1: cpu compressed to" "$TMP/master.log" | head -1 | cut -d' ' -f2)
task=$(echo "$run" | sed 's/^[0-9]*\.\([0-9]*\)#.*/\1/'); attempt=${run#*#}
cluster=$(printf %s "$(cat "$S/keys/master.pub")" | sha256sum | cut -c1-12)
quota() { # the task's quota in us per 100 ms period (v1 cfs_quota_us, v2 cpu.max)
  local leaf="hrm/$cluster/n1/$job.$task.$attempt" d f
  for d in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct; do
    [ -e "$d/$leaf/cpu.cfs_quota_us" ] && { cat "$d/$leaf/cpu.cfs_quota_us"; return; }
  done
  f=$(find /sys/fs/cgroup -maxdepth 8 -path "*/$leaf/cpu.max" 2>/dev/null | head -1)
  if [ -n "$f" ]; then cut -d' ' -f1 "$f"; else echo -1; fi
}
limit_now() { jq_task "$job" "$task" 't.get("cpu_limit", 0)'; }
at_limit() { l=$(limit_now); [ "$l" -gt 0 ] && [ "$(quota)" -eq $((l * 100)) ]; }
until_ok 60 at_limit || fail "task $task: cpu_limit $(limit_now), quota $(quota)"
[ "$(quota)" -lt 100000 ] || fail "the compressed quota $(quota) is not below the request's 100000"
grep -q "task $run: cpu compressed to" "$TMP/n1.log" || fail "the agent did not log it"

# Every other task stops (those not started yet exit at once): the node is no longer
# over-committed and the task gets its request back.
for i in $(seq 0 $((n - 1))); do [ "$i" = "$task" ] || touch "$TMP/stop.$i"; done
released() { [ "$(quota)" -eq 100000 ] && [ "$(limit_now)" = 0 ]; }
until_ok 60 released || fail "not released: quota $(quota), cpu_limit $(limit_now)"
grep -q "task $run on n1: cpu released to 1000 milli-cores" "$TMP/master.log" || fail "no release logged"
touch "$TMP/stop.$task"
expect_exit 0 "$HRM" wait "$job"
echo ok
