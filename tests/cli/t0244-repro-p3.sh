# scripts/repro-p3 regenerates every P3 table: all rows present, and the same bytes twice.
. "$(dirname "$0")/lib.sh"
need python3
"$HRM_ROOT/scripts/repro-p3" "$HRM" "$TMP/a" --seeds 1 >"$TMP/stdout"
"$HRM_ROOT/scripts/repro-p3" "$HRM" "$TMP/b" --seeds 1 >/dev/null
cmp "$TMP/a/tables.md" "$TMP/b/tables.md" || fail "two runs print different tables"
cmp "$TMP/a/tables.md" "$TMP/stdout" || fail "tables.md differs from what was printed"
t="$TMP/a/tables.md"
for h in "Table A" "Table B" "Table C" "Table D" "Table E" "Sensitivity: working set" "Sensitivity: HDD" \
         "Sensitivity: spill passes" "Sensitivity: SDASA's weights"; do
  matches -F "## $h" "$t" || fail "no section '$h'"
done
# Seven tables per experiment, and the by-size Table E for the single-job ones.
for e in "Fig. 2" "Fig. 3" "Fig. 4" "Fig. 5" "Fig. 6" "Fig. 7" "Fig. 8"; do
  want=8; [ "$e" = "Fig. 6" ] && want=7
  n=$(grep -cF "$e)" "$t")
  [ "$n" -eq "$want" ] || fail "experiment $e is in $n tables, expected $want"
done
# Table A: four completion times per experiment, every one a positive number.
python3 - "$t" <<'PY' || fail "Table A has a row without four times"
import sys
text = open(sys.argv[1]).read().split("## Table B")[0]
rows = [l for l in text.splitlines() if "(Fig." in l]
assert len(rows) == 7, rows
for l in rows:
    cells = [c.strip() for c in l.strip("|").split("|")]
    assert all(float(c) > 0 for c in cells[1:5]), l
PY
for th in 0.8 0.9 1.0 1.1 1.2 1.3 1.4; do
  matches "^| $th | [+-]" "$t" || fail "Table C lacks the threshold $th"
done
expect_exit 1 "$HRM_ROOT/scripts/repro-p3" "$TMP/no-such-hrm" "$TMP/c"
matches -F "no hrm binary" "$TMP/err" || fail "a missing binary is not named"
