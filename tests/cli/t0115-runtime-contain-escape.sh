# No process of a task outlives it: a background grandchild and a setsid'ed one die on cancel, at the task's end, and when a restarted agent finds what its SIGKILLed predecessor left; no task cgroup is left behind.
. "$(dirname "$0")/rtlib.sh"
need pgrep sha256sum
[ -w /sys/fs/cgroup/freezer ] || [ -w /sys/fs/cgroup/cgroup.procs ] || fail "needs writable cgroups (root)"
keygen
start_master --node-timeout 2s --reconcile 1s
start_agent n1 --cpus 2
until_ok 30 nodes_up 1 || fail "n1 did not register"
# The processes are told apart by a number in their argv no other test uses.
M="$$$RANDOM"
alive() { pgrep -fc "^sleep 97[0-9][0-9]\\.$M\$" || true; }
alive_is() { [ "$(alive)" -eq "$1" ]; }
# task N1 N2: a shell with a background grandchild (sleep N1) and a setsid'ed one (sleep N2)
grandkids() { echo "sleep $1.$M & setsid sleep $2.$M &"; }

# Cancel.
j=$("$HRM" submit -- sh -c "$(grandkids 9711 9712) wait") || fail "submit"
until_ok 60 alive_is 2 || fail "the grandchildren never ran ($(alive))"
expect_exit 0 "$HRM" cancel "$j"
until_ok 60 alive_is 0 || fail "$(alive) grandchild(ren) outlived hrm cancel"

# The main process ends (exit 0) and leaves both behind: they die with it.
j=$("$HRM" submit -- sh -c "$(grandkids 9721 9722)
until [ \"\$(pgrep -fc '^sleep 972[12]\\.$M\$')\" -eq 2 ]; do sleep 0.05; done") || fail "submit"
expect_exit 0 timeout 60 "$HRM" wait "$j"
until_ok 60 alive_is 0 || fail "$(alive) grandchild(ren) outlived their task's end"

# Agent SIGKILL: the main process dies with it (parent-death signal), the grandchildren do
# not; the restarted agent kills them.
sigkill_sweep "$AGENT_n1" n1 9731 9732 start_agent n1 --cpus 2

# Many short tasks, some leaving a process behind: no task cgroup remains once they end.
until_ok 30 nodes_up 1 || fail "n1 did not come back"
j=$("$HRM" submit --count 20 --cpus 0.5 -- sh -c "setsid sleep 9741.$M & exit 0") || fail "submit"
expect_exit 0 timeout 120 "$HRM" wait "$j"
until_ok 60 alive_is 0 || fail "$(alive) setsid'ed process(es) outlived their tasks"
cluster=$(printf %s "$(cat "$S/keys/master.pub")" | sha256sum | cut -c1-12)
task_dirs() {
  local c
  for c in cpu memory pids freezer; do
    [ -d "/sys/fs/cgroup/$c/hrm/$cluster/n1" ] && find "/sys/fs/cgroup/$c/hrm/$cluster/n1" -mindepth 1 -type d
  done | wc -l
}
[ -d "/sys/fs/cgroup/cpu/hrm/$cluster/n1" ] || fail "no cgroup folder hrm/$cluster/n1 for this cluster's n1"
no_task_dirs() { [ "$(task_dirs)" -eq 0 ]; }
until_ok 30 no_task_dirs || fail "$(task_dirs) task cgroup(s) left behind"
# A stopped agent removes its node's folders too.
kill -TERM "$AGENT_n1"
{ wait "$AGENT_n1"; } 2>/dev/null || true
for c in cpu memory pids freezer; do
  [ ! -e "/sys/fs/cgroup/$c/hrm/$cluster" ] || fail "$c/hrm/$cluster left after the agent stopped"
done
