# A running task's usage comes from its own cgroup (cpuacct and memory) and reaches the policy: a task whose CPU is burnt by a child process (which /proc of the task's main process does not count) shows CPU time no greater than its cgroup's cpuacct.usage read afterwards, and the master hands the samples to the central role.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --policy fgm --log-level debug
start_agent n1 --cpus 2 --mem 2G --usage-period 200ms
until_ok 60 nodes_up 1 || fail "n1 did not register"
grep -Eq "cgroup v[12] " "$TMP/n1.log" || fail "this test needs cgroups (the agent found none: see n1.log)"

# The task names its own cgroup files, then burns CPU in a child and waits for it.
cat >"$TMP/burn.sh" <<'X'
set -eu
out=$1
if grep -q "^0::" /proc/self/cgroup && ! grep -q "^[0-9]*:cpuacct" /proc/self/cgroup && ! grep -q "^[0-9]*:cpu,cpuacct" /proc/self/cgroup; then
  p=$(sed -n 's/^0:://p' /proc/self/cgroup)
  echo "v2 /sys/fs/cgroup$p" >"$out.tmp"
else
  c=$(awk -F: '{n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == "cpuacct") print $3}' /proc/self/cgroup)
  m=$(awk -F: '{n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == "memory") print $3}' /proc/self/cgroup)
  for d in /sys/fs/cgroup/cpuacct /sys/fs/cgroup/cpu,cpuacct; do
    [ -e "$d$c/cpuacct.usage" ] && { echo "v1 $d$c /sys/fs/cgroup/memory$m" >"$out.tmp"; break; }
  done
fi
mv "$out.tmp" "$out"
sh -c 'while :; do :; done' &
wait
X
job=$("$HRM" submit --cpus 1 --mem 256M -- sh "$TMP/burn.sh" "$TMP/cg") || fail "submit"
until_ok 60 test -s "$TMP/cg" || fail "the task did not start"
read -r mode cpudir memdir <"$TMP/cg"
case "$cpudir" in */hrm/*) ;; *) fail "the task is not in a cgroup of its own for CPU accounting: $cpudir" ;; esac

task_field() { # FIELD: the task's field in hrm job --json
  "$HRM" job "$job" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
print(j["tasks"][0].get(sys.argv[1], -1))' "$1"
}
cpu_seen() { [ "$(task_field cpu_us)" -gt 0 ]; }
until_ok 60 cpu_seen || fail "no CPU time reported for a CPU-burning task (cpu_us $(task_field cpu_us))"
cpu=$(task_field cpu_us); rss=$(task_field rss); peak=$(task_field rss_peak)
if [ "$mode" = v1 ]; then
  ns=$(cat "$cpudir/cpuacct.usage"); maxmem=$(cat "$memdir/memory.max_usage_in_bytes")
else
  ns=$(($(sed -n 's/^usage_usec //p' "$cpudir/cpu.stat") * 1000)); maxmem=$(cat "$cpudir/memory.peak" 2>/dev/null || echo "$peak")
fi
# Reported before the files were read: never more than they say.
[ $((cpu * 1000)) -le "$ns" ] || fail "reported cpu_us $cpu is above the cgroup's $ns ns"
[ "$rss" -gt 0 ] && [ "$rss" -le "$maxmem" ] || fail "reported rss $rss, cgroup peak $maxmem"
[ "$peak" -ge "$rss" ] && [ "$peak" -le "$maxmem" ] || fail "reported rss_peak $peak (rss $rss, cgroup peak $maxmem)"

# The samples reach the policy as task usage, with the task's CPU.
handed() { grep -Eq "usage to the policy: task_usage node 0 task 0 attempt 1: cpu [1-9][0-9]* milli-cores" "$TMP/master.log"; }
until_ok 60 handed || fail "no task usage with CPU handed to the policy"
grep -q "usage to the policy: node_usage node 0 " "$TMP/master.log" || fail "no node usage handed to the policy"
expect_exit 0 "$HRM" cancel "$job"
echo ok
