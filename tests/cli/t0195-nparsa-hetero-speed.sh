# A heterogeneous cluster on one machine: agents at --speed 1 and 0.25 measure themselves (the bench runs under the node's CPU quota), the master maps the figures to NPARSA's cpu_speed without being told the factor, hrm nodes shows them, and NPARSA sends a CPU-heavy job to the fast node.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --policy nparsa
# A long usage period: on one host every agent sees the others' tasks as its foreign load, so
# the node samples would only add noise to what this test checks, the measured speed.  The same
# disk throttle on both, far below the disk's own speed, so that the disk figures (which NPARSA
# weighs more than CPU speed) measure alike.
start_agent fast --cpus 2 --mem 2G --usage-period 1h --disk-bps 30MB/s
start_agent slow --cpus 2 --mem 2G --usage-period 1h --disk-bps 30MB/s --speed 0.25
until_ok 90 nodes_up 2 || fail "the agents did not register"

field() { # NODE PATH...: a field of hrm nodes --json ("null" when unknown)
  "$HRM" nodes --json | python3 -c 'import json, sys
ns = json.load(sys.stdin); ns = ns if isinstance(ns, list) else ns["nodes"]
v = [n for n in ns if n["name"] == sys.argv[1]][0]
for k in sys.argv[2:]: v = v.get(k) if isinstance(v, dict) else None
print("null" if v is None else v)' "$@"
}
fast_cpu=$(field fast bench cpu); slow_cpu=$(field slow bench cpu)
[ "$fast_cpu" != null ] && [ "$slow_cpu" != null ] || fail "no bench figures: fast $fast_cpu, slow $slow_cpu"
# A 4x quota cannot be missed, even on a busy host: a generous margin.
python3 -c 'import sys; f, s = map(float, sys.argv[1:]); sys.exit(0 if s < 0.6 * f else 1)' \
  "$fast_cpu" "$slow_cpu" || fail "the slow node measured $slow_cpu, the fast one $fast_cpu"
for k in mem_bw disk_bw at; do
  [ "$(field fast bench $k)" != null ] || fail "the fast node has no bench $k"
done
# cpu_speed is relative to the fastest node: the fast one is 1, the slow one its ratio.
has_speed() { [ "$(field fast cpu_speed)" != null ]; }
done_job() { "$HRM" job "$1" --json | matches '"state": "done"'; }
# The scheduler's cluster is built at the first pass: a job makes one.  It ends before the
# job below, which then finds both nodes idle.
warm=$("$HRM" submit --cpus 1 --mem 64M -- true) || fail "submit"
until_ok 60 done_job "$warm" || fail "job $warm did not finish"
until_ok 60 has_speed || fail "no cpu_speed in hrm nodes"
python3 -c 'import sys; f, s = map(float, sys.argv[1:]); sys.exit(0 if f == 1 and 0 < s < 0.6 else 1)' \
  "$(field fast cpu_speed)" "$(field slow cpu_speed)" ||
  fail "cpu_speed: fast $(field fast cpu_speed), slow $(field slow cpu_speed)"
[ "$(field fast ahp_score cpu)" != null ] && [ "$(field slow ahp_score mem)" != null ] ||
  fail "no AHP scores per job type"
"$HRM" nodes >"$TMP/nodes.txt" || fail "hrm nodes"
grep -q "SCORE-CPU" "$TMP/nodes.txt" && grep -Eq "^slow +[0-9.]+ +0\.[0-5]" "$TMP/nodes.txt" ||
  { cat "$TMP/nodes.txt" >&2; fail "hrm nodes does not show the measured speed"; }

# A CPU-heavy job (J = 64 MiB per core, far below 1.1 GiB): NPARSA puts its one task on the
# fast node, found by the measurement alone.
job=$("$HRM" submit --cpus 1 --mem 64M -- sh -c 'echo ran') || fail "submit"
until_ok 60 done_job "$job" || fail "job $job did not finish"
node=$("$HRM" job "$job" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); print(j["tasks"][0]["node"])')
[ "$node" = fast ] || fail "NPARSA put the CPU-heavy task on $node"
echo ok
