# Where compression cannot or should not happen: a policy other than FGM shows each task's request and measured peak but no estimate ("-") and never compresses; an FGM cluster whose agent runs tasks without cgroups gets the compression, says in its log that it cannot apply it, and the tasks run to their end.
. "$(dirname "$0")/fgm-lib.sh"
keygen
# DRF: request and peak, no estimate, no compression.
start_master --policy drf
start_agent n1 --cpus 2 --mem 2G --usage-period 200ms
until_ok 60 nodes_up 1 || fail "n1 did not register"
job=$("$HRM" submit --cpus 1 --mem 64M -- sh "$TMP/burn.sh" "$TMP/stop") || fail "submit"
until_ok 60 fgm_sampled "$job" || fail "no usage sample"
touch "$TMP/stop"
expect_exit 0 "$HRM" wait "$job"
[ "$(fgm_task "$job" 0 't["estimate"] is None and t["request"] == {"cpu": 1000, "mem": 67108864}')" = True ] ||
  fail "drf task: $(fgm_task "$job" 0 't')"
"$HRM" job "$job" | grep -Eq "^ +0 +done .* 1\.00/64M +- +[0-9]+\.[0-9]{2}/[0-9]+M" ||
  fail "drf table: $("$HRM" job "$job")"
grep -q "cpu compressed" "$TMP/master.log" && fail "drf compressed a task"
kill -TERM "$AGENT_n1" "$MASTER"; wait "$AGENT_n1" "$MASTER" 2>/dev/null || true
rm -rf "$S" "$TMP/stop"; keygen

# FGM with an agent without cgroups (learn with samples, then pack with none, as t0191).
start_master "${FGM_PARAMS[@]}"
fgm_learn n1 --no-cgroup
fgm_restart_packed n1 --no-cgroup
n=24
job=$("$HRM" submit --cpus 1 --mem 64M --count $n -- sh "$TMP/burn.sh" "$FGM_STOP") || fail "submit"
said() { grep -Eq "task $job\.[0-9]+#[0-9]+: cpu compressed to [0-9]+ milli-cores not applied: the task has no cgroup" "$TMP/n1.log"; }
until_ok 60 said || fail "the agent without cgroups did not say it could not compress (learned $FGM_EST on $FGM_CORES cores)"
touch "$FGM_STOP"
expect_exit 0 "$HRM" wait "$job"
echo "ok (learned $FGM_EST milli-cores; a node of $FGM_CORES cores)"
