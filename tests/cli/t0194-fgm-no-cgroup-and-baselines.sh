# Where compression cannot or should not happen: a policy other than FGM shows each task's request and measured peak but no estimate ("-") and never compresses; an FGM cluster whose agent runs tasks without cgroups gets the compression, says in its log that it cannot apply it, and the tasks run to their end.
. "$(dirname "$0")/rtlib.sh"
keygen
cat >"$TMP/burn.sh" <<'X'
while [ ! -e "$1" ] && [ ! -e "$1.$HRM_TASK_ID" ]; do i=0; while [ $i -lt 10000 ]; do i=$((i + 1)); done; sleep 0.01; done
X
field() { # JOB EXPR over task 0 (t) and the job (j)
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); t = j["tasks"][0]; print(eval(sys.argv[1]))' "$2"
}
sampled() { [ "$(field "$1" 't["cpu_peak"]')" -gt 0 ]; }

# DRF: request and peak, no estimate, no compression.
start_master --policy drf
start_agent n1 --cpus 2 --mem 2G --usage-period 200ms
until_ok 60 nodes_up 1 || fail "n1 did not register"
job=$("$HRM" submit --cpus 1 --mem 64M -- sh "$TMP/burn.sh" "$TMP/stop") || fail "submit"
until_ok 60 sampled "$job" || fail "no usage sample"
touch "$TMP/stop"
expect_exit 0 "$HRM" wait "$job"
[ "$(field "$job" 't["estimate"] is None and t["request"] == {"cpu": 1000, "mem": 67108864}')" = True ] ||
  fail "drf task: $(field "$job" 't')"
"$HRM" job "$job" | grep -Eq "^ +0 +done .* 1\.00/64M +- +[0-9]+\.[0-9]{2}/[0-9]+M" ||
  fail "drf table: $("$HRM" job "$job")"
grep -q "cpu compressed" "$TMP/master.log" && fail "drf compressed a task"
kill -TERM "$AGENT_n1" "$MASTER"; wait "$AGENT_n1" "$MASTER" 2>/dev/null || true
rm -rf "$S" "$TMP/stop"; keygen

# FGM with an agent without cgroups (learn with samples, then pack with none, as t0191).
start_master --policy fgm --param max_compression=0.5 --param limitation=0.5 --param qos_stretch=100
start_agent n1 --cpus 2 --mem 2G --usage-period 200ms --no-cgroup
until_ok 60 nodes_up 1 || fail "n1 did not register"
learn=$("$HRM" submit --cpus 1 --mem 64M -- sh "$TMP/burn.sh" "$TMP/stop") || fail "submit"
until_ok 60 sampled "$learn" || fail "no usage sample"
touch "$TMP/stop"
expect_exit 0 "$HRM" wait "$learn"
kill -TERM "$AGENT_n1"; wait "$AGENT_n1" 2>/dev/null || true
regs=$(grep -c "registered with the master" "$TMP/n1.log")
start_agent n1 --cpus 2 --mem 2G --usage-period 1h --no-cgroup
registered_again() { [ "$(grep -c "registered with the master" "$TMP/n1.log")" -gt "$regs" ]; }
until_ok 60 registered_again || fail "n1 did not come back"
rm "$TMP/stop"
n=24
job=$("$HRM" submit --cpus 1 --mem 64M --count $n -- sh "$TMP/burn.sh" "$TMP/stop") || fail "submit"
said() { grep -Eq "task $job\.[0-9]+#[0-9]+: cpu compressed to [0-9]+ milli-cores not applied: the task has no cgroup" "$TMP/n1.log"; }
until_ok 60 said || fail "the agent without cgroups did not say it could not compress"
touch "$TMP/stop"
expect_exit 0 "$HRM" wait "$job"
echo ok
