# A task sees hrm's own HRM_JOB_ID, HRM_TASK_ID and HRM_NODE even when its stored job carries an env of the same names (a job accepted before such names were refused).
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
# No agent yet: the job waits, stored, while its env is edited as an older master would have kept it.
# printenv reads with getenv, which takes the first of duplicate entries (a shell would keep
# the last, and hide the problem).
id=$("$HRM" submit --count 2 --env SHADOW_JOB=999 --env SHADOW_TASK=77 --env SHADOW_NODE=elsewhere \
  -- printenv HRM_JOB_ID HRM_TASK_ID HRM_NODE) || fail "submit"
kill -TERM "$MASTER"; until_ok 30 sh -c "! kill -0 $MASTER 2>/dev/null" || fail "master did not stop"
python3 - "$S/hrm.db" "$id" <<'P'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
spec = json.loads(db.execute("SELECT spec FROM jobs WHERE id = ?", (int(sys.argv[2]),)).fetchone()[0])
for g in spec["tasks"]:
    g["env"] = {k.replace("SHADOW_", "HRM_") + ("_ID" if k in ("SHADOW_JOB", "SHADOW_TASK") else ""): v
                for k, v in g["env"].items()}
    assert set(g["env"]) == {"HRM_JOB_ID", "HRM_TASK_ID", "HRM_NODE"}, g["env"]
db.execute("UPDATE jobs SET spec = ? WHERE id = ?", (json.dumps(spec), int(sys.argv[2])))
db.commit()
P
start_master
start_agent n1 --cpus 2 --no-cgroup
expect_exit 0 timeout 120 "$HRM" wait "$id"
for t in 0 1; do
  got=$("$HRM" logs "$id" --task $t | tr '\n' ' ')
  [ "$got" = "$id $t n1 " ] || fail "task $t saw '$got', not '$id $t n1'"
done
echo ok
