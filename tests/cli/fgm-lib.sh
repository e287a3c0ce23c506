# Helpers of the FGM tests (t0191, t0193, t0194): a learned estimate, and a node size that makes
# FGM's over-commit certain whatever CPU rate the (shared, busy) machine let the learning run show.
. "$(dirname "$0")/rtlib.sh"
# The master these tests run: compression up to half the node whatever formula (7) says, no QoS
# veto, one stage per profile (so the estimate hrm job shows is the one FGM plans with).
FGM_PARAMS=(--policy fgm --param max_compression=0.5 --param limitation=0.5 --param qos_stretch=100
  --param max_stages=1)
# Burns part of a core until $1 or $1.TASK exists.
cat >"$TMP/burn.sh" <<'X'
while [ ! -e "$1" ] && [ ! -e "$1.$HRM_TASK_ID" ]; do i=0; while [ $i -lt 10000 ]; do i=$((i + 1)); done; sleep 0.01; done
X
fgm_task() { # JOB TASK EXPR over task t and job j of hrm job JOB --json
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); t = j["tasks"][int(sys.argv[1])]; print(eval(sys.argv[2]))' "$2" "$3"
}
fgm_sampled() { [ "$(fgm_task "$1" 0 't["cpu_peak"]')" -gt 0 ]; }
# fgm_overcommit_cpus EST: the whole cores (1-8; agents declare whole cores) to give the node so
# that 24 tasks of estimate EST milli-cores over-commit it, or nothing when none does. FGM places
# such tasks while the node is not full now (their estimates within 99 % of it: the `idle`
# parameter), the next one by compressing it into the node (half the node may be compressed);
# the master throttles once the estimates exceed the node by 2 %. So a node where the last
# task lands within that 2 % is never throttled (EST just over 1000 does that on every size);
# the choice keeps 1 % of margin on EST either way.
fgm_overcommit_cpus() {
  python3 - "$1" <<'X'
import sys
est = int(sys.argv[1])
def throttled(cap, e, n=24):
    k = 0
    while k < n and (k + 1) * e <= 0.99 * cap:
        k += 1
    if k < n and cap - k * e + 0.5 * cap >= e:
        k += 1
    return k * e > 1.02 * cap
for cores in range(1, 9):
    if all(throttled(cores * 1000, est * f) for f in (0.99, 1, 1.01)):
        print(cores)
        break
X
}
# fgm_learn_with SCRIPT ACCEPT [SAMPLED]: learns the use of `sh SCRIPT STOP` on the agent up now,
# each time under another command line (a profile of its own, learned afresh), until ACCEPT (a
# function that reads FGM_EST) succeeds, at most 5 times. SAMPLED JOB (fgm_sampled if none) says
# when the master has the sample to learn from. Sets FGM_EST (milli-cores) and FGM_STOP (the
# learned command is sh SCRIPT $FGM_STOP).
fgm_learn_with() {
  local script=$1 accept=$2 sampled=${3:-fgm_sampled} learn runs=0 seen=""
  while :; do
    [ $runs -lt 5 ] || fail "no estimate learned suits the test ($accept): $seen"
    FGM_STOP=$TMP/stop-$runs
    learn=$("$HRM" submit --cpus 1 --mem 64M -- sh "$script" "$FGM_STOP") || fail "submit"
    until_ok 60 "$sampled" "$learn" || fail "no usage sample reached the master"
    touch "$FGM_STOP"
    expect_exit 0 "$HRM" wait "$learn"
    rm "$FGM_STOP"
    FGM_EST=$(fgm_task "$learn" 0 't["estimate"]["cpu"] if t["estimate"] else 0')
    [ "$FGM_EST" -gt 0 ] || fail "nothing learned"
    runs=$((runs + 1)); seen="$seen $FGM_EST"
    "$accept" && return 0
  done
}
fgm_cores_found() { FGM_CORES=$(fgm_overcommit_cpus "$FGM_EST"); [ -n "$FGM_CORES" ]; }
# fgm_learn N FLAGS...: runs a burn task on a fresh agent N (sampling every 200 ms) until some
# node size is over-committed by the estimate learned (fgm_learn_with). Sets FGM_EST, FGM_CORES
# and FGM_STOP, and stops the agent.
fgm_learn() {
  local name=$1; shift
  start_agent "$name" --cpus 2 --mem 2G --usage-period 200ms "$@"
  until_ok 60 nodes_up 1 || fail "$name did not register"
  fgm_learn_with "$TMP/burn.sh" fgm_cores_found
  FGM_REGS=$(grep -c "registered with the master" "$TMP/$name.log")
  eval "kill -TERM \"\$AGENT_$name\"; wait \"\$AGENT_$name\" 2>/dev/null" || true
}
# fgm_restart_packed N FLAGS...: agent N again, with FGM_CORES cores and reporting no usage (FGM
# plans from its estimate alone, not from the shared machine's changing load).
fgm_restart_packed() {
  local name=$1; shift
  start_agent "$name" --cpus "$FGM_CORES" --mem 2G --usage-period 1h "$@"
  fgm_back() { [ "$(grep -c "registered with the master" "$TMP/$name.log")" -gt "$FGM_REGS" ]; }
  until_ok 60 fgm_back || fail "$name did not come back"
}
