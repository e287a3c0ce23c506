# Two clusters on one host, each with a node named node1, run tasks at the same time with different limits: each task's cgroup names its own cluster (hrm/<sha256 of master.pub, 12 hex>/node1/...) and carries its own limits.
. "$(dirname "$0")/rtlib.sh"
need sha256sum
[ -w /sys/fs/cgroup/cpu ] || fail "needs writable cgroup v1 cpu and memory hierarchies (root)"
# cluster N: its state folder, keys, master and agent node1
cluster_up() {
  local d="$TMP/c$1"
  mkdir -p "$d" && "$HRM" keygen "$d/keys" >/dev/null || fail "keygen $1"
  timeout 300 "$HRM" master --state "$d" --log-level info >>"$TMP/master$1.log" 2>&1 &
  PIDS+=($!)
  until_ok 30 test -s "$d/endpoint" || fail "master $1 did not start"
  timeout 300 "$HRM" agent --state "$d" --name node1 --cpus 4 --log-level info >>"$TMP/node1-$1.log" 2>&1 &
  PIDS+=($!)
  until_ok 30 sh -c "'$HRM' nodes --state '$d' --json | grep -q '\"state\": \"up\"'" ||
    fail "node1 of cluster $1 did not register"
}
cluster_up 1
cluster_up 2
# Each task copies what it finds from inside: its cgroups and their limits; then it waits for
# the other cluster's task, so both run at once.
task() {
  echo "cp /proc/self/cgroup $TMP/cg$1.tmp && mv $TMP/cg$1.tmp $TMP/cg$1
p=\$(sed -n 's/^[0-9]*:cpu:\(.*\)/\1/p' /proc/self/cgroup)
m=\$(sed -n 's/^[0-9]*:memory:\(.*\)/\1/p' /proc/self/cgroup)
cat /sys/fs/cgroup/cpu\$p/cpu.cfs_quota_us /sys/fs/cgroup/memory\$m/memory.limit_in_bytes >$TMP/lim$1
until [ -e $TMP/cg$2 ]; do sleep 0.05; done"
}
j1=$("$HRM" submit --state "$TMP/c1" --cpus 1 --mem 100M -- sh -c "$(task 1 2)") || fail "submit 1"
j2=$("$HRM" submit --state "$TMP/c2" --cpus 2 --mem 200M -- sh -c "$(task 2 1)") || fail "submit 2"
expect_exit 0 timeout 120 "$HRM" wait --state "$TMP/c1" "$j1"
expect_exit 0 timeout 120 "$HRM" wait --state "$TMP/c2" "$j2"
for n in 1 2; do
  id=$(printf %s "$(cat "$TMP/c$n/keys/master.pub")" | sha256sum | cut -c1-12)
  for ctl in cpu memory; do
    grep -q "^[0-9]*:$ctl:/hrm/$id/node1/[0-9]*\.0\.1\$" "$TMP/cg$n" ||
      fail "cluster $n's task is not under hrm/$id/node1 in $ctl: $(grep ":$ctl:" "$TMP/cg$n")"
  done
  "$HRM" agent --check --state "$TMP/c$n" --name node1 | matches "^tasks in  *hrm/$id/node1/" ||
    fail "hrm agent --check does not name cluster $n's cgroups"
done
[ "$(sed -n 1p "$TMP/lim1")" -eq 100000 ] || fail "cluster 1's task: cpu quota $(sed -n 1p "$TMP/lim1"), expected 100000 (1 CPU)"
[ "$(sed -n 1p "$TMP/lim2")" -eq 200000 ] || fail "cluster 2's task: cpu quota $(sed -n 1p "$TMP/lim2"), expected 200000 (2 CPUs)"
[ "$(sed -n 2p "$TMP/lim1")" -eq $((100 << 20)) ] || fail "cluster 1's task: memory limit $(sed -n 2p "$TMP/lim1")"
[ "$(sed -n 2p "$TMP/lim2")" -eq $((200 << 20)) ] || fail "cluster 2's task: memory limit $(sed -n 2p "$TMP/lim2")"
