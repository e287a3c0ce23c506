# --plot writes real PNG files with gnuplot; --csv writes one row per job.
. "$(dirname "$0")/lib.sh"
command -v gnuplot >/dev/null || fail "gnuplot is not installed (scripts/install-deps installs it)"
"$HRM" sim "$HRM_ROOT/examples/p1-testbed.json" --policy fifo,fair --plot "$TMP/plots" --quiet >/dev/null
for f in response-cdf.png utilisation.png; do
  [ -s "$TMP/plots/$f" ] || fail "$f missing"
  head -c 8 "$TMP/plots/$f" | od -An -tx1 | matches "89 50 4e 47" || fail "$f is not a PNG"
done
rows=$(($(wc -l <"$TMP/plots/fifo-jobs.csv") - 1))
[ "$rows" -eq 36 ] || fail "fifo-jobs.csv has $rows rows, expected 36"
