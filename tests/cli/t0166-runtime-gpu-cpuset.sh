# A task's cores are its resource unit's, enforced with a cpuset cgroup: on a node of 2 cores and 1 GPU the GPU unit binds the first core and the CPU unit the second; a GPU task runs on its unit's core (its cpuset group says so, and /proc/self/status agrees); a CPU task borrows the idle GPU unit's core and gives it back while a GPU task runs (lending), then gets it again.
. "$(dirname "$0")/rtlib.sh"
# The host's CPUs of its first NUMA node (the model's domain 0), in order, as the agent's hwloc sees them.
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
lists = [cpus(open(n + "/cpulist").read()) for n in nodes] or [sorted(allowed)]
lists = [l for l in lists if l]
# two model cores: one domain holds both; two or more domains: one core each (the model splits evenly)
print(*(lists[0][:2] if len(lists) == 1 else [lists[0][0], lists[1][0]]))
')"
if [ "${#pus[@]}" -lt 2 ]; then echo "SKIP: this test needs a host with 2 CPUs"; exit 0; fi
gpu_cpu=${pus[0]} cpu_cpu=${pus[1]}
both=$(python3 -c "import sys; a, b = sorted(map(int, sys.argv[1:])); print(f'{a}-{b}' if b == a + 1 else f'{a},{b}')" "$gpu_cpu" "$cpu_cpu")

keygen
start_master
start_agent n1 --cpus 2 --mem 2G --gpus 1
until_ok 60 nodes_up 1 || fail "n1 did not register"
# The test reads the v1 cpuset hierarchy; the agent must be able to make groups there.
if ! [ -e /sys/fs/cgroup/cpuset/cpuset.cpus ] || ! [ -w /sys/fs/cgroup/cpuset ] || ! grep -q "cgroup v1 " "$TMP/n1.log"; then
  echo "SKIP: this test needs a writable cgroup v1 cpuset hierarchy (the agent's log: $(grep -m1 cgroup "$TMP/n1.log"))"; exit 0
fi

mkdir -p "$TMP/seen"
# A task that keeps writing its allowed CPUs, its cpuset group's CPUs and its GPU variables to
# $TMP/seen/NAME until the test creates $TMP/go-NAME.
cat >"$TMP/watch.sh" <<'X'
name=$1 out=$2
cg=$(awk -F: '$2 == "cpuset" {print $3}' /proc/self/cgroup)
while :; do
  {
    echo "allowed $(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)"
    echo "cpuset $(cat "/sys/fs/cgroup/cpuset$cg/cpuset.cpus" 2>/dev/null || echo none)"
    echo "group $cg"
    echo "devices ${CUDA_VISIBLE_DEVICES-unset} share ${HRM_GPU_SHARE-unset} mem ${HRM_GPU_MEM-unset}"
  } >"$out/$name.tmp"
  mv "$out/$name.tmp" "$out/$name"
  [ -e "$out/../go-$name" ] && exit 0
  sleep 0.1
done
X
says() { grep -qx "$2" "$TMP/seen/$1" 2>/dev/null; }

# A CPU task alone on the node: the CPU unit's core and the idle GPU unit's.
c=$("$HRM" submit --cpus 1 -- sh "$TMP/watch.sh" cpu "$TMP/seen") || fail "submit cpu"
until_ok 60 says cpu "allowed $both" || fail "a CPU task on an idle node is not on both cores: $(cat "$TMP/seen/cpu" 2>&1)"
says cpu "cpuset $both" || fail "the CPU task's cpuset group does not hold both cores: $(cat "$TMP/seen/cpu")"
grep -q "^group /hrm/.*/n1/$c\.0\.1$" "$TMP/seen/cpu" || fail "the CPU task is not in its own cpuset group: $(cat "$TMP/seen/cpu")"

# A GPU task: its unit's core, in its cpuset group, and its GPU variables.
g=$("$HRM" submit --gpus 1 --cpus 1 -- sh "$TMP/watch.sh" gpu "$TMP/seen") || fail "submit gpu"
until_ok 60 test -e "$TMP/seen/gpu" || fail "the GPU task did not start"
says gpu "allowed $gpu_cpu" || fail "the GPU task is not on its unit's core $gpu_cpu: $(cat "$TMP/seen/gpu")"
says gpu "cpuset $gpu_cpu" || fail "the GPU task's cpuset group is not its unit's core: $(cat "$TMP/seen/gpu")"
says gpu "devices 0 share 1 mem $((16 << 30))" || fail "the GPU task's variables: $(cat "$TMP/seen/gpu")"
# The GPU's core is no longer lent: the CPU task keeps the CPU unit's core only.
until_ok 60 says cpu "allowed $cpu_cpu" || fail "the CPU task kept the busy GPU unit's core: $(cat "$TMP/seen/cpu")"
says cpu "cpuset $cpu_cpu" || fail "the CPU task's cpuset group kept the GPU unit's core: $(cat "$TMP/seen/cpu")"
# The GPU task ends: its core is lent again.
touch "$TMP/go-gpu"
expect_exit 0 timeout 120 "$HRM" wait "$g"
until_ok 60 says cpu "allowed $both" || fail "the CPU task did not get the idle GPU unit's core back: $(cat "$TMP/seen/cpu")"
touch "$TMP/go-cpu"
expect_exit 0 timeout 120 "$HRM" wait "$c"
