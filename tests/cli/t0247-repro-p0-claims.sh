# scripts/repro-p0-claims: P0's Table 1, Fig. 12, Fig. 9 and the split of the CPU gain run, twice the same, in the direction the mechanisms imply.
. "$(dirname "$0")/lib.sh"
need python3
"$HRM_ROOT/scripts/repro-p0-claims" "$HRM" "$TMP/a" >"$TMP/one" || fail "repro-p0-claims failed"
"$HRM_ROOT/scripts/repro-p0-claims" "$HRM" "$TMP/b" >"$TMP/two" || fail "second run failed"
cmp "$TMP/one" "$TMP/two" || fail "two runs differ"
for t in "Table 1" "Fig. 12" "Fig. 9" "What the CPU gain owes"; do
  grep -q "== $t" "$TMP/one" || fail "no table '$t'"
done
python3 - "$TMP/one" <<'PY' || fail "tables go the wrong way"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
def row(prefix):
    r = [l for l in lines if l.startswith("| " + prefix)]
    assert r, prefix
    return [c.strip() for c in r[0].strip("|").split("|")]
num = lambda c: float(re.match(r"[-+]?[0-9.]+", c.strip()).group(0))
# Table 1: more executors per GPU, shorter job, busier GPU.
t = [row(str(e) + " |") for e in (1, 2, 3)]
assert num(t[0][1]) > num(t[1][1]) > num(t[2][1]), "completion does not fall with executors"
assert num(t[0][3]) < num(t[1][3]) < num(t[2][3]), "GPU utilisation does not rise"
# Fig. 12 together: lending keeps the GPU's utilisation and gives more CPU than rigid binding.
lend = [l for l in lines if l.startswith("| together | flexible")][0].split("|")
rigid = [l for l in lines if l.startswith("| together | rigid")][0].split("|")
alone = [l for l in lines if l.startswith("| GPU job alone | flexible")][0].split("|")
assert num(lend[3]) > num(rigid[3]), "lending does not raise CPU utilisation"
assert num(lend[4]) == num(alone[4]), "GPU utilisation changes beside the CPU job"
# The split: every mechanism at least keeps hrm-static's utilisation; all of hrm beats it.
base = num(row("separate partitions")[1])
assert num(row("all of hrm")[1]) > base
assert num(row("+ lending only")[1]) > base
PY
