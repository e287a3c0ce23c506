# Without the cpuset controller (here: --no-cgroup) a task's unit cores are bound with sched_setaffinity, and the agent says so once in its log: a GPU task runs on its GPU unit's core, a CPU task started while the GPU is busy on the CPU unit's core.
. "$(dirname "$0")/rtlib.sh"
read -r -a pus <<<"$(python3 -c '
import os, glob
allowed = os.sched_getaffinity(0)
nodes = sorted(glob.glob("/sys/devices/system/node/node[0-9]*"), key=lambda p: int(p.rsplit("node", 1)[1]))
def cpus(text):
    out = []
    for part in text.strip().split(","):
        if part:
            a, _, b = part.partition("-")
            out += range(int(a), int(b or a) + 1)
    return [c for c in out if c in allowed]
lists = [l for l in ([cpus(open(n + "/cpulist").read()) for n in nodes] or [sorted(allowed)]) if l]
print(*(lists[0][:2] if len(lists) == 1 else [lists[0][0], lists[1][0]]))
')"
if [ "${#pus[@]}" -lt 2 ]; then echo "SKIP: this test needs a host with 2 CPUs"; exit 0; fi
keygen
start_master
start_agent n1 --cpus 2 --mem 2G --gpus 1 --no-cgroup
until_ok 60 nodes_up 1 || fail "n1 did not register"
mkdir -p "$TMP/seen"
hold='awk "/^Cpus_allowed_list:/ {print \$2}" /proc/self/status > $0.tmp && mv $0.tmp $0; while [ ! -e $0.go ]; do sleep 0.1; done'
g=$("$HRM" submit --gpus 1 --cpus 1 -- sh -c "$hold" "$TMP/seen/gpu") || fail "submit gpu"
until_ok 60 test -e "$TMP/seen/gpu" || fail "the GPU task did not start"
[ "$(cat "$TMP/seen/gpu")" = "${pus[0]}" ] || fail "the GPU task runs on '$(cat "$TMP/seen/gpu")', not its unit's core ${pus[0]}"
c=$("$HRM" submit --cpus 1 -- sh -c "$hold" "$TMP/seen/cpu") || fail "submit cpu"
until_ok 60 test -e "$TMP/seen/cpu" || fail "the CPU task did not start"
[ "$(cat "$TMP/seen/cpu")" = "${pus[1]}" ] || fail "the CPU task runs on '$(cat "$TMP/seen/cpu")' beside a busy GPU, not the CPU unit's core ${pus[1]}"
touch "$TMP/seen/gpu.go" "$TMP/seen/cpu.go"
expect_exit 0 timeout 120 "$HRM" wait "$g"
expect_exit 0 timeout 120 "$HRM" wait "$c"
[ "$(grep -c "bound with sched_setaffinity only" "$TMP/n1.log")" -eq 1 ] || fail "the agent did not say once that affinity alone binds tasks: $(grep -c "sched_setaffinity" "$TMP/n1.log") lines"
