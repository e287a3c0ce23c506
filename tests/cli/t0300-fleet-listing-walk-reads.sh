# A `hrm jobs` listing's estimates at fleet size: the walk that places every pending task on the
# node where it starts first asks each node once for a job's shape and then only the node whose
# table the last task changed (before, it read all the nodes' answers again for each task:
# O(nodes x pending tasks), 0.3-0.7 s of the master's CPU at 5,000 agents and 100,000 pending,
# which the listing waited for).  The master's debug log says how many answers a walk read.
. "$(dirname "$0")/rtlib.sh"
need python3
N=300
P=3000
# N simulated agents of one CPU each, named w1..wN, in one process (tracked in PIDS).
fleet_of_one_cpu() {
  local n=$1
  keygen
  start_master --log-level debug --node-timeout 600s
  start_fleet "$n" w --cpus 1 --mem 8G --log-level warning
}
fleet_of_one_cpu $N
# Every CPU busy for an hour, then P one-CPU tasks of 10 s that all wait.
busy=$("$HRM" submit --count $N --cpus 1 --time 1h -- sleep 3600) || fail "submit the busy job"
running() { "$HRM" job "$busy" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
sys.exit(0 if j["running"] - j["queued"] == int(sys.argv[1]) else 1)' "$N"; }
until_ok 120 running || fail "the busy job's $N tasks did not all start"
wait_job=$("$HRM" submit --count $P --cpus 1 --time 10s -- sleep 10) || fail "submit the waiting job"
"$HRM" jobs --json >"$TMP/jobs.json" || fail "hrm jobs"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); jobs = d.get("jobs", d) if isinstance(d, dict) else d
j = [x for x in jobs if x["id"] == int(sys.argv[2])][0]
assert j["pending"] == int(sys.argv[3]), j
assert isinstance(j["estimated_start_s"], int) and j["estimated_start_s"] > 0, j' \
  "$TMP/jobs.json" "$wait_job" "$P" || fail "the waiting job is not listed pending with an estimate"
walk=$(grep "estimates: a walk" "$TMP/master.log" | tail -n 1)
[ -n "$walk" ] || fail "the listing logged no walk"
read_n=$(sed -n 's/.*(\([0-9]*\) node answers read, \([0-9]*\) nodes).*/\1/p' <<<"$walk")
nodes=$(sed -n 's/.*(\([0-9]*\) node answers read, \([0-9]*\) nodes).*/\2/p' <<<"$walk")
[ -n "$read_n" ] || fail "the walk's log line says no node answers read: $walk"
[ "$nodes" = "$N" ] || fail "the walk saw $nodes nodes, not $N: $walk"
# Each of the P tasks is asked about once to be queued, plus each job's first question, plus
# one answer per node for each shape: far under N x P (900,000).
[ "$read_n" -le $((N + 2 * P + 2 * N)) ] || fail "the walk read $read_n node answers for $P tasks on $N nodes: $walk"
"$HRM" cancel "$wait_job" >/dev/null || fail "cancel"
"$HRM" cancel "$busy" >/dev/null || fail "cancel"
echo ok
