# hrm bench flow --algo auto on P1 graphs in supply form (the DIMACS files of flow-gen): the
# network simplex where no units compete (fewer tasks than GPUs), shortest paths where they do
# (more tasks than GPUs); a re-solve after an arc change runs warm shortest paths and equals a
# from-scratch solve; the optimal cost equals the other engine's.
. "$(dirname "$0")/lib.sh"

engine() { sed -n "s/^flow: $2: \(warm \)\{0,1\}\(network simplex\|shortest paths\|cost scaling\),.*/\2/p" "$1"; }
cost() { sed -n 's/^BENCH flow.cost \([-0-9]*\) .*/\1/p' "$1"; }

check() { # EXPECTED-ENGINE OTHER-ALGO flow-gen arguments...
  local want=$1 other=$2; shift 2
  "$HRM" bench flow-gen "$@" --out "$TMP/g.min" || fail "flow-gen $*"
  "$HRM" bench flow --dimacs "$TMP/g.min" --full 1 --repeat 3 >"$TMP/a.out" 2>"$TMP/a.err" ||
    fail "$*: auto failed: $(cat "$TMP/a.err")"
  [ "$(engine "$TMP/a.err" "full solve")" = "$want" ] ||
    fail "$*: auto ran '$(engine "$TMP/a.err" "full solve")', expected $want"
  [ "$(engine "$TMP/a.err" "arc change")" = "shortest paths" ] ||
    fail "$*: re-solve: $(cat "$TMP/a.err")"
  grep -q "arc change: warm shortest paths" "$TMP/a.err" || fail "$*: re-solve not warm: $(cat "$TMP/a.err")"
  grep -q "warm result equals a from-scratch solve" "$TMP/a.err" || fail "$*: warm result: $(cat "$TMP/a.err")"
  "$HRM" bench flow --dimacs "$TMP/g.min" --algo "$other" --full 1 --repeat 0 >"$TMP/o.out" 2>"$TMP/o.err" ||
    fail "$*: $other failed: $(cat "$TMP/o.err")"
  [ "$(cost "$TMP/a.out")" = "$(cost "$TMP/o.out")" ] ||
    fail "$*: auto cost $(cost "$TMP/a.out"), $other $(cost "$TMP/o.out")"
}

# fewer tasks than GPUs, one vertex per machine and one per GPU: the simplex
check "network simplex" ssp p1-rack --gpus 800 --jobs 40 --tasks-per-job 5 --seed 2
check "network simplex" ssp p1 --gpus 800 --jobs 40 --tasks-per-job 5 --seed 2
# more tasks than GPUs: shortest paths
check "shortest paths" simplex p1-rack --gpus 400 --jobs 40 --tasks-per-job 20 --seed 2
check "shortest paths" simplex p1 --gpus 400 --jobs 40 --tasks-per-job 20 --seed 2
echo ok
