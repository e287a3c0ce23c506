# Node usage: every agent reports its node's foreign load (what is not an hrm task), idle or not; a CPU burner started outside hrm shows as foreign CPU, and the master hands node samples to the policy.  --usage-period is checked.
. "$(dirname "$0")/rtlib.sh"
expect_exit 2 "$HRM" agent --usage-period 0
grep -q -- "--usage-period" "$TMP/err" || fail "a bad --usage-period is not named"
"$HRM" agent --help | matches -- "--usage-period D" || fail "--help does not document --usage-period"

keygen
start_master --policy nparsa --log-level debug
start_agent n1 --cpus 2 --mem 2G --usage-period 200ms
until_ok 60 nodes_up 1 || fail "n1 did not register"

node_field() { # FIELD: n1's field in hrm nodes --json (-1 when absent)
  "$HRM" nodes --json | python3 -c 'import json, sys
d = json.load(sys.stdin); ns = d if isinstance(d, list) else d["nodes"]
print(ns[0].get(sys.argv[1], -1))' "$1"
}
reported() { [ "$(node_field foreign_cpu)" -ge 0 ]; }
until_ok 60 reported || fail "the idle node reports no foreign load"
before=$(node_field foreign_cpu)

# A burner outside hrm, bounded by timeout, on every CPU the host has: the node is busy
# with something that is not a task.
for _ in $(seq "$(nproc)"); do
  timeout 120 sh -c 'while :; do :; done' &
  PIDS+=($!)
done
busy() { [ "$(node_field foreign_cpu)" -gt 0 ]; }
until_ok 60 busy || fail "foreign_cpu stays $(node_field foreign_cpu) with a burner running (before: $before)"
[ "$(node_field foreign_mem)" -gt 0 ] || fail "no foreign memory reported"
[ "$(node_field disk_busy)" -ge 0 ] || fail "no disk figure reported"
handed() { grep -Eq "usage to the policy: node_usage node 0 task -1 attempt -1: cpu [1-9][0-9]* milli-cores" "$TMP/master.log"; }
until_ok 60 handed || fail "no node usage with CPU handed to the policy"
echo ok
