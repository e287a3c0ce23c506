# The runtime's GPU path on virtual GPUs: a GPU task gets CUDA_VISIBLE_DEVICES, tasks running at once get distinct devices, a task waits while every GPU is held, a task asking more GPUs than any node has is refused; hrm up --gpus passes the GPUs on.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 4 --mem 4G --gpus 2
until_ok 60 nodes_up 1 || fail "n1 did not register"
"$HRM" nodes --json | python3 -c 'import json, sys; n = json.load(sys.stdin)[0]; sys.exit(0 if n["gpus"] == 2 else "gpus: %r" % n["gpus"])' \
  || fail "n1 does not show its 2 GPUs"
mkdir -p "$TMP/dev"
# A task that records the devices it was given, then holds until the test creates $TMP/go-NAME.
gpu_task() { # NAME
  echo "echo \"\${CUDA_VISIBLE_DEVICES-unset}\" > $TMP/dev/\$HRM_JOB_ID-\$HRM_TASK_ID.tmp; mv $TMP/dev/\$HRM_JOB_ID-\$HRM_TASK_ID.tmp $TMP/dev/\$HRM_JOB_ID-\$HRM_TASK_ID; while [ ! -e $TMP/go-$1 ]; do sleep 0.05; done"
}
dev() { cat "$TMP/dev/$1-$2"; }

# Two one-GPU tasks at once: each sees one device, not the same one.
a=$("$HRM" submit --count 2 --gpus 1 --cpus 1 -- sh -c "$(gpu_task a)") || fail "submit a"
until_ok 60 test -e "$TMP/dev/$a-0" -a -e "$TMP/dev/$a-1" || fail "the two GPU tasks did not both start"
d0=$(dev "$a" 0); d1=$(dev "$a" 1)
[[ $d0 =~ ^[01]$ && $d1 =~ ^[01]$ ]] || fail "CUDA_VISIBLE_DEVICES '$d0' and '$d1': expected one device each"
[ "$d0" != "$d1" ] || fail "two tasks running at once share GPU $d0"
# A CPU task runs beside them and is given no device.
c=$("$HRM" submit --cpus 1 -- sh -c "echo \"\${CUDA_VISIBLE_DEVICES-unset}\" > $TMP/dev/cpu") || fail "submit cpu"
expect_exit 0 timeout 120 "$HRM" wait "$c"
[ "$(cat "$TMP/dev/cpu")" = unset ] || fail "a CPU task was given GPUs: $(cat "$TMP/dev/cpu")"
# Both GPUs are held: a third GPU task waits, though cores are free; it starts only once a
# task of the first job has ended and given its GPU back.
w=$("$HRM" submit --gpus 1 --cpus 1 -- sh -c "$(gpu_task w)") || fail "submit w"
touch "$TMP/go-a"
expect_exit 0 timeout 120 "$HRM" wait "$a"
until_ok 60 test -e "$TMP/dev/$w-0" || fail "the waiting GPU task never started"
[[ $(dev "$w" 0) =~ ^[01]$ ]] || fail "the waiting task got '$(dev "$w" 0)'"
"$HRM" job "$a" --json >"$TMP/a.json"; "$HRM" job "$w" --json >"$TMP/w.json"
python3 - "$TMP/a.json" "$TMP/w.json" <<'P' || fail "a GPU task started while every GPU was held"
import json, sys
tasks = lambda f: (lambda d: d.get("job", d))(json.load(open(f)))["tasks"]
a, w = tasks(sys.argv[1]), tasks(sys.argv[2])
assert w[0]["start_us"] >= min(t["end_us"] for t in a), (a, w)
P
touch "$TMP/go-w"
expect_exit 0 timeout 120 "$HRM" wait "$w"
# A two-GPU task gets both devices.
b=$("$HRM" submit --gpus 2 --cpus 1 -- sh -c "$(gpu_task b)") || fail "submit b"
touch "$TMP/go-b"
expect_exit 0 timeout 120 "$HRM" wait "$b"
[ "$(dev "$b" 0 | tr , '\n' | sort | tr '\n' ' ')" = "0 1 " ] || fail "a two-GPU task got '$(dev "$b" 0)'"
# More GPUs than any node has: refused at submission with the reason.
expect_exit 2 "$HRM" submit --gpus 3 -- true
grep -q "more than any node" "$TMP/err" || fail "a three-GPU task not refused clearly"

# hrm up --gpus: each node of the cluster has the GPUs, and a GPU task gets one.
cat >"$TMP/up.sh" <<'X'
set -e
"$HRM" nodes --json | python3 -c 'import json, sys; n = json.load(sys.stdin); sys.exit(0 if len(n) == 2 and all(x["gpus"] == 2 for x in n) else 1)'
id=$("$HRM" submit --count 4 --gpus 1 -- sh -c 'echo "$CUDA_VISIBLE_DEVICES"')
timeout 120 "$HRM" wait "$id"
for t in 0 1 2 3; do "$HRM" logs "$id" --task $t | grep -Eqx '[01]'; done
X
expect_exit 0 timeout 300 "$HRM" up --nodes 2 --cpus 2 --gpus 2 --state "$TMP/up" -- bash "$TMP/up.sh"
