# The master sends a turn's launches once the turn's commit is written, before the WAL's sync,
# and the submitter's acknowledgement only after the sync (docs/runtime.md, "State folder and
# durability").  Each submission below is accepted and placed in one turn, on an agent that is
# told nothing else in it (the previous job has ended and its end was acknowledged), so that
# turn's debug log says the launch left before the sync, then the reply.
. "$(dirname "$0")/rtlib.sh"
mkdir -p "$TMP/runs"
keygen
start_master --log-level debug
start_agent n1 --cpus 1 --mem 1G --no-cgroup
until_ok 60 nodes_up 1 || fail "node did not register"
for i in 1 2 3; do # one at a time, each waited for: its agent is told nothing but its launch
  expect_exit 0 "$HRM" submit -- sh -c "echo x >> '$TMP/runs/r-$i'"
  expect_exit 0 timeout 120 "$HRM" wait "$(cat "$TMP/out")"
done
ran_once r 3 "the jobs"
n=$(grep -c "sent 1 launch batch before the commit's sync" "$TMP/master.log" || true)
[ "$n" -ge 3 ] || fail "the master logged $n launches sent before their commit's sync, not 3"
# Each of those turns sent its reply after the sync: the line after the early launch, in the
# same turn, is the reply's (the launch counted with it), never a reply before the launch.
python3 - "$TMP/master.log" <<'P' || fail "a reply did not follow its turn's early launch"
import sys
lines = [l for l in open(sys.argv[1]) if "launch batch before" in l or "client message" in l]
pairs = sum(1 for a, b in zip(lines, lines[1:])
            if "launch batch before" in a and "sent 1 agent batch, then 1 client message" in b)
sys.exit(0 if pairs >= 3 else 1)
P
echo ok
