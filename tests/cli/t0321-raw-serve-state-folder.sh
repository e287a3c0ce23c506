# hrm raw-serve finds the master's keys in the state folder as the client verbs find it: --state DIR, else $HRM_STATE, an empty $HRM_STATE counting as unset (.hrm), and a user's $HRM_KEYS (client keys) not applying; a folder without keys is named in the error.
. "$(dirname "$0")/rtlib.sh"
keygen
: >"$TMP/frames"
# listens DESC [NAME=VALUE...] [-- ARGS...]: raw-serve came as far as listening (no peer comes: exit 1, said)
listens() {
  local desc=$1 vars=() args=(); shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
  if [ $# -gt 0 ]; then shift; args=("$@"); fi
  local rc=0
  env "${vars[@]}" "$HRM" raw-serve "${args[@]}" --timeout 0.2 "$TMP/frames" >"$TMP/rs.out" 2>"$TMP/rs.err" || rc=$?
  [ "$rc" = 1 ] || fail "$desc: exit $rc: $(cat "$TMP/rs.err")"
  grep -q '^listening tcp://127\.0\.0\.1:[0-9]' "$TMP/rs.out" || fail "$desc: did not listen: $(cat "$TMP/rs.err")"
  grep -q 'no peer within' "$TMP/rs.err" || fail "$desc: $(cat "$TMP/rs.err")"
}
listens "--state" HRM_STATE=/nonexistent -- --state "$S"
listens "\$HRM_STATE" HRM_STATE="$S"
listens "\$HRM_KEYS is a client's" HRM_STATE="$S" HRM_KEYS=/nonexistent
listens "--keys" HRM_STATE=/nonexistent -- --keys "$S/keys"
mkdir -p "$TMP/cwd/.hrm" && cp -r "$S/keys" "$TMP/cwd/.hrm/keys"
cd "$TMP/cwd" || fail "cd"
listens "an empty \$HRM_STATE" HRM_STATE=
cd - >/dev/null || fail "cd -"
# a folder without the master's key: the error names it
expect_exit 1 "$HRM" raw-serve --state "$TMP/nowhere" --timeout 0.2 "$TMP/frames"
grep -q "$TMP/nowhere/keys" "$TMP/err" || fail "no keys: $(cat "$TMP/err")"
! grep -q '^listening' "$TMP/out" || fail "listened without keys"
echo ok
