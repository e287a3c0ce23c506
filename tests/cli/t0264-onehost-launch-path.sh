# The launch path: tasks launched together get their own cgroup, their environment (the job's, hrm's, their user's HOME/USER), their output files and their exit status; a job's user is looked up once for a burst of its tasks (the agent says so at debug level), and each user's tasks still run as that user.
. "$(dirname "$0")/rtlib.sh"
need id
[ "$(id -u)" -eq 0 ] || fail "needs root (tasks switch users)"
id nobody >/dev/null 2>&1 || fail "needs the user 'nobody'"
keygen
# A client key whose jobs run as nobody (as in t0117).
"$HRM" keygen --client nob --user nobody "$S/keys" >/dev/null || fail "keygen --client"
mkdir -m 0700 "$TMP/nobody-keys"
cp "$S/keys/master.pub" "$TMP/nobody-keys/"
cp -p "$S/keys/client-nob.key" "$TMP/nobody-keys/client.key"
cp -p "$S/keys/client-nob.pub" "$TMP/nobody-keys/client.pub"
chmod 0711 "$TMP" "$S"
start_master
start_agent n1 --cpus 4 --mem 2G --log-level debug
until_ok 60 nodes_up 1 || fail "n1 did not register"
cg=on; grep -Eq "cgroup v[12] " "$TMP/n1.log" || cg=off

# Four tasks of one job, placed in one pass and launched in one turn of the agent.
cat >"$TMP/task.sh" <<'X'
echo "job=$HRM_JOB_ID task=$HRM_TASK_ID attempt=$HRM_ATTEMPT node=$HRM_NODE mine=$MINE"
echo "uid=$(id -u) home=$HOME user=$USER"
echo "cg=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*://p; s/^0:://p' /proc/self/cgroup | head -1)"
echo "to stderr $HRM_TASK_ID" >&2
exit $((HRM_TASK_ID + 2))
X
chmod 0644 "$TMP/task.sh"
submit_nobody() { HRM_KEYS="$TMP/nobody-keys" "$HRM" submit "$@"; }
j=$(submit_nobody --count 4 --env MINE=yes --cwd / -- sh "$TMP/task.sh") || fail "submit"
timeout 120 "$HRM" wait "$j" >/dev/null 2>&1 || true  # its tasks fail on purpose (2..5)
"$HRM" job "$j" --json >"$TMP/job.json" || fail "hrm job"
python3 - "$TMP/job.json" <<'X' || fail "exit statuses: $(cat "$TMP/job.json")"
import json, sys
d = json.load(open(sys.argv[1])); j = d.get("job", d)
codes = sorted(t["exit"] for t in j["tasks"])
assert codes == [2, 3, 4, 5], codes
X
agent_cg=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*://p; s/^0:://p' "/proc/$AGENT_n1/cgroup" | head -1)
for k in 0 1 2 3; do
  out="$S/agents/n1/$j/$k.out"
  [ -s "$out" ] || fail "task $k wrote no output file"
  grep -qx "job=$j task=$k attempt=1 node=n1 mine=yes" "$out" || fail "task $k's environment: $(cat "$out")"
  grep -qx "uid=$(id -u nobody) home=$(getent passwd nobody | cut -d: -f6) user=nobody" "$out" ||
    fail "task $k did not run as nobody: $(cat "$out")"
  grep -qx "to stderr $k" "$S/agents/n1/$j/$k.err" || fail "task $k's stderr"
  [ "$(stat -c %u "$out")" = "$(id -u nobody)" ] || fail "task $k's output is not nobody's"
  if [ "$cg" = on ]; then
    c=$(sed -n 's/^cg=//p' "$out")
    [ -n "$c" ] && [ "$c" != "$agent_cg" ] || fail "task $k is not in a cgroup of its own: '$c'"
  fi
done
n=$(grep -c "user 'nobody' resolved" "$TMP/n1.log" || true)
[ "$n" -eq 1 ] || fail "the agent looked nobody up $n times for one job's tasks"

# Then the agent's own user's job: it runs as root, not as the user resolved before it.
j2=$("$HRM" submit --count 2 -- sh -c 'id -u; echo "$USER"') || fail "submit root"
expect_exit 0 timeout 120 "$HRM" wait "$j2"
for k in 0 1; do
  [ "$(sed -n 1p "$S/agents/n1/$j2/$k.out")" = 0 ] || fail "root's task $k ran as uid $(sed -n 1p "$S/agents/n1/$j2/$k.out")"
done
# ...and nobody again: still nobody (from the cache now), with nobody's groups.
j3=$(submit_nobody -- sh -c 'id -u; id -G') || fail "submit nobody again"
expect_exit 0 timeout 120 "$HRM" wait "$j3"
[ "$(sed -n 1p "$S/agents/n1/$j3/0.out")" = "$(id -u nobody)" ] || fail "the second nobody job ran as uid $(sed -n 1p "$S/agents/n1/$j3/0.out")"
[ "$(sed -n 2p "$S/agents/n1/$j3/0.out")" = "$(id -G nobody)" ] || fail "the second nobody job's groups: $(sed -n 2p "$S/agents/n1/$j3/0.out")"
echo "ok"
