# The hot messages written as text end to end: a job whose cmd, cwd and env hold quotes, backslashes, control characters and UTF-8 (some sent as \u escapes) runs with exactly those bytes; a burst of 300 tasks goes through batches of texts both ways.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 4 --mem 4G
until_ok 60 nodes_up 1 || fail "node did not register"

dir="$TMP/w d \"q\" é"
mkdir -p "$dir"
# \u0001 and \u00e9 are escapes in the file; the client sends them as jansson writes them
# (\u0001 stays an escape: the master's reader hands that frame to jansson).
python3 - "$TMP/job.json" "$dir" <<'PY'
import json, sys
spec = {"name": "text", "tasks": [{
    "cmd": ["sh", "-c", 'printf "%s|%s|%s|%s|" "$A" "$B" "$C" "$(pwd)"; printf "%s" "$1"', "sh",
            "arg \"quoted\" \\ back\tslash"],
    "cwd": sys.argv[2],
    "env": {"A": "x=\"y\" \\z", "B": "tab\there\nnl", "C": "\u00e9t\u00e9 \U0001F600 \u0001"},
    "cpus": "250m"}]}
open(sys.argv[1], "w").write(json.dumps(spec, ensure_ascii=True))
PY
j=$("$HRM" submit "$TMP/job.json") || fail "submit"
expect_exit 0 timeout 120 "$HRM" wait "$j"
"$HRM" logs "$j" >"$TMP/got"
printf '%s|%s|%s|%s|%s' 'x="y" \z' "$(printf 'tab\there\nnl')" "$(printf 'été \xf0\x9f\x98\x80 \x01')" \
  "$dir" 'arg "quoted" \ back	slash' >"$TMP/want"
cmp "$TMP/got" "$TMP/want" || { od -c "$TMP/got" | head; od -c "$TMP/want" | head; fail "the task did not get its bytes"; }

# A burst: launches, acknowledgements, starts and ends travel as batches of texts.
b=$("$HRM" submit --no-output --count 300 --cpus 250m -- true) || fail "submit burst"
expect_exit 0 timeout 300 "$HRM" wait "$b"
"$HRM" job "$b" --json >"$TMP/b.out"
grep -q '"done": 300' "$TMP/b.out" || fail "burst: not 300 done"
