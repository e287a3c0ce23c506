# hrm bench flow --algo simplex: every flow-gen family (size S) solved by the network simplex has
# the optimal cost shortest paths find, and its warm re-solves (an arc's cost changed) equal a
# from-scratch solve; --algo names simplex among its choices.
. "$(dirname "$0")/lib.sh"

for fam in netgen gridgen goto p1 p1-rack; do
  "$HRM" bench flow-gen "$fam" --size S --seed 3 --out "$TMP/$fam.min"
  "$HRM" bench flow --dimacs "$TMP/$fam.min" --algo simplex --full 1 --repeat 3 >"$TMP/nx.out" 2>"$TMP/nx.err" ||
    fail "$fam: simplex failed: $(cat "$TMP/nx.err")"
  grep -q "full solve: network simplex" "$TMP/nx.err" || fail "$fam: not the simplex: $(cat "$TMP/nx.err")"
  grep -q "arc change: warm network simplex" "$TMP/nx.err" || fail "$fam: re-solve not warm: $(cat "$TMP/nx.err")"
  grep -q "warm result equals a from-scratch solve" "$TMP/nx.err" || fail "$fam: warm result: $(cat "$TMP/nx.err")"
  "$HRM" bench flow --dimacs "$TMP/$fam.min" --algo ssp --full 1 --repeat 0 >"$TMP/sp.out" 2>"$TMP/sp.err" ||
    fail "$fam: ssp failed: $(cat "$TMP/sp.err")"
  a=$(sed -n 's/^BENCH flow.cost \([-0-9]*\) .*/\1/p' "$TMP/nx.out")
  b=$(sed -n 's/^BENCH flow.cost \([-0-9]*\) .*/\1/p' "$TMP/sp.out")
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "$fam: simplex cost '$a', shortest paths '$b'"
done

expect_exit 2 "$HRM" bench flow --dimacs "$TMP/netgen.min" --algo simplx
grep -q "'simplx' is not auto, ssp, scaling or simplex" "$TMP/err" || fail "bad --algo: $(cat "$TMP/err")"
"$HRM" bench flow --help | matches -e "--algo auto|ssp|scaling|simplex" || fail "--help lacks simplex"
echo ok
