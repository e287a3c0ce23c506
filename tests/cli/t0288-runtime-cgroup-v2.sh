# The cgroup v2 path, on a host of either version: an agent in a mount namespace of its own, with the unified hierarchy mounted at /sys/fs/cgroup, says which limits it enforces (the controllers the hierarchy offers) and which it cannot; runs each task in hrm/CLUSTER/NODE/TASK; a cancel kills a setsid'ed grandchild (cgroup.kill); a restarted agent sweeps what its SIGKILLed predecessor left; a stopped agent removes its folders.
. "$(dirname "$0")/rtlib.sh"
need pgrep sha256sum unshare mount
# v2 CMD: CMD in a mount namespace that sees the unified hierarchy at /sys/fs/cgroup
v2() { unshare -m sh -c 'mount -t cgroup2 none /sys/fs/cgroup && exec "$@"' sh "$@"; }
v2 true 2>"$TMP/mount.err" || fail "needs root and a kernel with cgroup2 (mount -t cgroup2 in a mount namespace): $(cat "$TMP/mount.err")"
keygen
cluster=$(printf %s "$(cat "$S/keys/master.pub")" | sha256sum | cut -c1-12)
# What a SIGKILLed agent's tasks leave in the unified hierarchy is invisible to rt_cleanup.
v2_clean() {
  local tries
  for tries in $(seq 20); do
    v2 sh -c "d=/sys/fs/cgroup/hrm/$cluster; [ -d \$d ] || exit 0
      find \$d -name cgroup.kill -exec sh -c 'echo 1 >\"\$1\"' sh {} \\; 2>/dev/null
      find \$d -depth -type d -exec rmdir {} + 2>/dev/null; [ ! -d \$d ]" && break
    sleep 0.1
  done
}
trap 'rt_cleanup; v2_clean; rm -rf "$TMP"; [ -z "${RT_LEFT:-}" ] || exit 1' EXIT
start_master --node-timeout 2s --reconcile 1s
"$HRM" keygen --node w "$S/keys" >/dev/null || fail "keygen --node w"
start_v2_agent() { # not through v2(): $! must be the agent itself (unshare and sh exec it)
  unshare -m sh -c 'mount -t cgroup2 none /sys/fs/cgroup && exec "$@"' sh \
    "$HRM" agent --state "$S" --name w --cpus 2 --log-level info >>"$TMP/w.log" 2>&1 &
  AGENT=$!; PIDS+=("$AGENT")
}
start_v2_agent
until_ok 60 nodes_up 1 || fail "the agent did not register"

# It says what it enforces, from the controllers the hierarchy offers it.
offered=$(v2 cat /sys/fs/cgroup/cgroup.controllers)
line=$(grep "cgroup v2 under /sys/fs/cgroup/hrm/CLUSTER (" "$TMP/w.log") || fail "the agent does not say it uses cgroup v2: $(head -3 "$TMP/w.log")"
for c in cpu:cpu.max memory:memory.max pids:pids.max; do
  name=${c%%:*} file=${c#*:}
  if echo " $offered " | grep -q " $name "; then
    echo "$line" | grep -q "$file" || fail "$name is offered but the agent does not say it limits with $file: $line"
  else
    ! echo "$line" | grep -q "$file" || fail "the agent claims $file without the $name controller: $line"
    echo "$line" | grep -q "limits not enforced: no such controller there" || fail "the agent does not say which limits it cannot enforce: $line"
    echo "$line" | sed 's/.*cgroup.kill[^;]*;//' | grep -q "$name" || fail "$name is not named as not enforced: $line"
  fi
done

# A task runs in its own group under the node's.
j=$("$HRM" submit -- sh -c "grep '^0::' /proc/self/cgroup > $TMP/where") || fail "submit"
expect_exit 0 timeout 60 "$HRM" wait "$j"
grep -q "^0::/hrm/$cluster/w/$j\.0\.1\$" "$TMP/where" || fail "the task ran in $(cat "$TMP/where"), not hrm/$cluster/w/$j.0.1"

# A cancel kills what the task started, though it left the process group.
M="$$$RANDOM"
alive() { pgrep -fc "^sleep 98[0-9][0-9]\\.$M\$" || true; }
alive_is() { [ "$(alive)" -eq "$1" ]; }
j=$("$HRM" submit -- sh -c "sleep 9811.$M & setsid sleep 9812.$M & wait") || fail "submit"
until_ok 60 alive_is 2 || fail "the grandchildren never ran ($(alive))"
expect_exit 0 "$HRM" cancel "$j"
until_ok 60 alive_is 0 || fail "$(alive) grandchild(ren) outlived hrm cancel"

# The agent is SIGKILLed: the grandchildren live on; the agent started again kills them and
# removes their group.
sigkill_sweep "$AGENT" w 9821 9822 start_v2_agent

# A stopped agent removes its node's folders, and its cluster's when nothing else is there.
until_ok 60 nodes_up 1 || fail "the agent did not come back"
kill -TERM "$AGENT"
{ wait "$AGENT"; } 2>/dev/null || true
v2 test ! -e "/sys/fs/cgroup/hrm/$cluster" || fail "hrm/$cluster left in the unified hierarchy after the agent stopped: $(v2 find "/sys/fs/cgroup/hrm/$cluster")"
