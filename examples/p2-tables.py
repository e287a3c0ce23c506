#!/usr/bin/env python3
"""Runs the P2 and P3 reproduction specs and prints the tables of docs/reproduction-p2-p3.md.

usage: python3 examples/p2-tables.py HRM [p2|p3] [--seeds N]

Each spec runs under its own policy list (its "sim" object) for seeds 1..N
(default 3) with `hrm sim SPEC --json --seed S`; figures are means over the
seeds, with the range when the seeds disagree by more than 1 %.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

P2 = ["p2-offline.json", "p2-online.json", "p2-cloud.json"]
P2_ROWS = [("makespan_s", "workload completion (makespan, s)"),
           ("response_mean_s", "job completion, mean (s)"),
           ("response_p50_s", "job completion, p50 (s)"),
           ("response_p95_s", "job completion, p95 (s)"),
           ("response_p99_s", "job completion, p99 (s)"),
           ("jain", "Jain's index over allocation shares (sampled, against the max-min fair division)"),
           ("jain_s", "Jain's index over s_j"),
           ("sched_latency_mean_s", "scheduling response, mean (s)"),
           ("cpu_util", "cpu use"),
           ("task_failures", "task failures (memory)")]
P3 = ["p3-vm4-wordcount.json", "p3-vm4-sort.json", "p3-vm4-kmeans.json",
      "p3-vm4-pagerank.json", "p3-vm4-parallel.json", "p3-vm3-pagerank.json",
      "p3-phys-pagerank.json"]


def run(hrm, spec, seed):
    out = subprocess.run([hrm, "sim", os.path.join(HERE, spec), "--json", "--seed", str(seed)],
                         check=True, capture_output=True, text=True).stdout
    return {r["policy"]: r for r in json.loads(out)}


def collect(hrm, spec, seeds):
    runs = [run(hrm, spec, s) for s in range(1, seeds + 1)]
    return list(runs[0].keys()), runs


def cell(vals, key):
    m = sum(vals) / len(vals)
    lo, hi = min(vals), max(vals)
    if key == "cpu_util":
        return "%.1f %%" % (100 * m)
    if key == "task_failures":
        return "%.1f" % m if len(vals) > 1 else "%d" % m
    fmt = "%.3f" if key in ("jain", "jain_s") else "%.1f"
    s = fmt % m
    if m and (hi - lo) / abs(m) > 0.01:
        s += " (" + fmt % lo + "–" + fmt % hi + ")"
    return s


def mean(runs, pol, key):
    return sum(r[pol][key] for r in runs) / len(runs)


def p2(hrm, seeds):
    for spec in P2:
        pols, runs = collect(hrm, spec, seeds)
        print("\n#### %s (%d seeds)\n" % (spec, seeds))
        print("| metric | " + " | ".join(pols) + " |")
        print("|---|" + "---|" * len(pols))
        for key, label in P2_ROWS:
            print("| %s | " % label +
                  " | ".join(cell([r[p][key] for r in runs], key) for p in pols) + " |")
        base = [p for p in pols if p != "fgm"]
        for key, label in (("makespan_s", "FGM workload completion vs"),
                           ("response_mean_s", "FGM mean job completion vs"),
                           ("jain", "FGM Jain vs")):
            f = mean(runs, "fgm", key)
            print("| %s | " % label + " | ".join(
                "%+.1f %%" % (100 * (f / mean(runs, p, key) - 1)) for p in base) + " | |")


def p3(hrm, seeds):
    print("\n| spec | " + " | ".join(["spread", "nparsa-notype", "nparsa"]) +
          " | nparsa vs spread | nparsa vs notype |")
    print("|---|---|---|---|---|---|")
    for spec in P3:
        pols, runs = collect(hrm, spec, seeds)
        means = {p: mean(runs, p, "response_mean_s") for p in pols}
        print("| %s | " % spec + " | ".join(
            cell([r[p]["response_mean_s"] for r in runs], "response_mean_s") for p in pols) +
              " | %+.1f %% | %+.1f %% |" % (100 * (means["nparsa"] / means["spread"] - 1),
                                           100 * (means["nparsa"] / means["nparsa-notype"] - 1)))


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("p2", "p3"):
        sys.exit(__doc__)
    seeds = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--seeds" else 3
    (p2 if sys.argv[2] == "p2" else p3)(sys.argv[1], seeds)


if __name__ == "__main__":
    main()
