# hrm-shared never oversubscribes a node: many small jobs from two scheduler processes on two small nodes; every task records its start and end, and no node ever ran more tasks at once than its CPUs.
. "$(dirname "$0")/rtlib.sh"
U="$TMP/up"
export HRM_STATE="$U"
"$HRM" up --nodes 2 --cpus 2 --policy hrm-shared --sched-procs 2 --param instances=4 --state "$U" \
  --log-level info >"$TMP/up.out" 2>"$TMP/up.err" &
PIDS+=("$!")
until_ok 60 nodes_up 2 || { cat "$TMP/up.err" >&2; fail "hrm up did not start"; }
mkdir -p "$TMP/iv"
# Each task appends "start end" (seconds, this host's clock) to the file of its node, taken
# inside the run: a recorded interval lies within the time the task held its CPU.
task="s=\$(date +%s.%N); sleep 0.2; e=\$(date +%s.%N); echo \"\$s \$e\" >> $TMP/iv/\$HRM_NODE"
ids=()
for i in $(seq 24); do
  ids+=("$("$HRM" submit --count 2 --cpus 1 -- sh -c "$task")") || fail "submit $i"
done
for id in "${ids[@]}"; do expect_exit 0 timeout 180 "$HRM" wait "$id"; done
python3 - "$TMP/iv" <<'PY' || fail "a node ran more tasks than its CPUs"
import os, sys
d = sys.argv[1]
runs = 0
for node in os.listdir(d):
    ev = []
    for line in open(os.path.join(d, node)):
        s, e = map(float, line.split())
        ev += [(s, 1), (e, -1)]
        runs += 1
    ev.sort(key=lambda x: (x[0], x[1]))  # an end before a start at the same instant
    cur = peak = 0
    for _, k in ev:
        cur += k
        peak = max(peak, cur)
    print(node, "peak", peak)
    assert peak <= 2, (node, peak)
assert runs == 48, runs
PY
