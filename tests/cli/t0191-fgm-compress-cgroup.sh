# FGM's compression reaches the kernel: once FGM has learned a command's CPU use, it packs tasks of that command by estimate and, allowed to compress, over-commits the node's cores; the master then sends each task there a task_cpu and the agent writes the task's cgroup CPU quota (cfs_quota_us or cpu.max) at its share of the cores. When the node is no longer over-committed (the other tasks ended) the quota is released to the task's request.
. "$(dirname "$0")/fgm-lib.sh"
keygen
start_master "${FGM_PARAMS[@]}"
fgm_learn n1
grep -Eq "cgroup v[12] " "$TMP/n1.log" || fail "this test needs cgroups (the agent found none: see n1.log)"
fgm_restart_packed n1
n=24
job=$("$HRM" submit --cpus 1 --mem 64M --count $n -- sh "$TMP/burn.sh" "$FGM_STOP") || fail "submit"
limited() { grep -q "task $job\.[0-9]*#[0-9]* on n1: cpu compressed to" "$TMP/master.log"; }
until_ok 60 limited || fail "FGM never over-committed n1 by estimate: learned $FGM_EST on $FGM_CORES cores, running $("$HRM" job "$job" --json | grep -c '"state": "running"')"
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
limit_now() { fgm_task "$job" "$task" 't.get("cpu_limit", 0)'; }
at_limit() { l=$(limit_now); [ "$l" -gt 0 ] && [ "$(quota)" -eq $((l * 100)) ]; }
until_ok 60 at_limit || fail "task $task: cpu_limit $(limit_now), quota $(quota)"
[ "$(quota)" -lt 100000 ] || fail "the compressed quota $(quota) is not below the request's 100000"
grep -q "task $run: cpu compressed to" "$TMP/n1.log" || fail "the agent did not log it"

# Every other task stops (those not started yet exit at once): the node is no longer
# over-committed and the task gets its request back.
for i in $(seq 0 $((n - 1))); do [ "$i" = "$task" ] || touch "$FGM_STOP.$i"; done
released() { [ "$(quota)" -eq 100000 ] && [ "$(limit_now)" = 0 ]; }
until_ok 60 released || fail "not released: quota $(quota), cpu_limit $(limit_now)"
grep -q "task $run on n1: cpu released to 1000 milli-cores" "$TMP/master.log" || fail "no release logged"
touch "$FGM_STOP.$task"
expect_exit 0 "$HRM" wait "$job"
echo "ok (learned $FGM_EST milli-cores; a node of $FGM_CORES cores)"
