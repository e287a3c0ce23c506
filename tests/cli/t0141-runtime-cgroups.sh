# cgroup limits and OOM detection: a task's own cgroup carries its CPU request as a quota and its memory request as a limit; a task over its memory limit is killed and reported out of memory.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2 --mem 2G
until_ok 60 nodes_up 1 || fail "n1 did not register"
grep -Eq "cgroup v[12] " "$TMP/n1.log" || fail "this test needs cgroups (the agent found none: see n1.log)"

# The task reads its limits from its own cgroup (the path from /proc/self/cgroup, v1 or v2).
cat >"$TMP/limits.sh" <<'X'
set -eu
v1() { # CONTROLLER FILE: the file of this process's cgroup of CONTROLLER (v1)
  p=$(awk -F: -v c="$1" '{n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3}' /proc/self/cgroup)
  for m in "/sys/fs/cgroup/$1" /sys/fs/cgroup/cpu,cpuacct; do
    [ -e "$m$p/$2" ] && { cat "$m$p/$2"; return; }
  done
  echo "no $1 $2"; return 1
}
if grep -q "^[0-9]*:cpu[,:]" /proc/self/cgroup || grep -q "^[0-9]*:cpu,cpuacct:" /proc/self/cgroup; then
  echo "quota $(v1 cpu cpu.cfs_quota_us) $(v1 cpu cpu.cfs_period_us)"
  echo "mem $(v1 memory memory.limit_in_bytes)"
else
  p=$(sed -n 's/^0:://p' /proc/self/cgroup)
  echo "quota $(cat "/sys/fs/cgroup$p/cpu.max")"
  echo "mem $(cat "/sys/fs/cgroup$p/memory.max")"
fi
X
lim=$("$HRM" submit --cpus 500m --mem 64M -- sh "$TMP/limits.sh") || fail "submit limits"
expect_exit 0 timeout 120 "$HRM" wait "$lim"
"$HRM" logs "$lim" >"$TMP/limits.out" || fail "logs of the limits task"
read -r _ quota period <<<"$(grep '^quota ' "$TMP/limits.out")"
[ -n "$quota" ] && [ -n "$period" ] || { cat "$TMP/limits.out" >&2; fail "no CPU quota in the task's cgroup"; }
# 500 milli-cores: a quota of half the period.
[ $((quota * 2)) -eq "$period" ] || { cat "$TMP/limits.out" >&2; fail "CPU quota $quota/$period for a 500m request"; }
grep -qx "mem $((64 << 20))" "$TMP/limits.out" || { cat "$TMP/limits.out" >&2; fail "memory limit is not the 64M request"; }
"$HRM" job "$lim" --json | matches '"oom": false' || fail "a task within its limits reported oom"

# A two-core request: the quota is two periods.
two=$("$HRM" submit --cpus 2 --mem 64M -- sh "$TMP/limits.sh") || fail "submit two"
expect_exit 0 timeout 120 "$HRM" wait "$two"
read -r _ quota period <<<"$("$HRM" logs "$two" | grep '^quota ')"
[ "$quota" -eq $((2 * period)) ] || fail "CPU quota $quota/$period for a 2-core request"

# Over its memory limit: 64M asked, 256M touched.  Killed (SIGKILL: exit 137) and reported oom.
[ "$(awk 'NR > 1' /proc/swaps | wc -l)" -eq 0 ] || fail "this test needs a host without swap (the task would swap, not die)"
big=$("$HRM" submit --mem 64M -- python3 -c 'x = b"\1" * (256 << 20); print(len(x))') || fail "submit big"
expect_exit 137 timeout 120 "$HRM" wait "$big"
"$HRM" job "$big" --json >"$TMP/big.json"
python3 - "$TMP/big.json" <<'P' || { cat "$TMP/big.json" >&2; fail "the task over its memory limit is not reported oom"; }
import json, sys
d = json.load(open(sys.argv[1])); j = d.get("job", d); t = j["tasks"][0]
assert t["oom"] is True and t["signal"] == 9 and j["state"] == "failed", t
P
"$HRM" job "$big" | matches "out of memory" || fail "hrm job does not say out of memory"
grep -q "out of memory" "$TMP/master.log" || fail "the master's log does not say out of memory"
# The same command with room enough runs to its end.
ok=$("$HRM" submit --mem 512M -- python3 -c 'x = b"\1" * (256 << 20); print(len(x))') || fail "submit ok"
expect_exit 0 timeout 120 "$HRM" wait "$ok"
[ "$("$HRM" logs "$ok")" = $((256 << 20)) ] || fail "the task with room did not finish"
