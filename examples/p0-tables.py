#!/usr/bin/env python3
"""Runs the P0 (HRM) reproduction specs and prints the tables of docs/reproduction-p0.md.

usage: python3 examples/p0-tables.py HRM

HRM is the hrm binary.  Each spec runs under its own policy list (its "sim"
object) with `hrm sim SPEC --json --csv DIR`; the workloads are explicit, so
one seed is the whole story (same spec, same output).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(hrm, spec, tmp):
    out = subprocess.run([hrm, "sim", os.path.join(HERE, spec), "--json", "--csv", tmp, "-q"],
                         check=True, capture_output=True, text=True).stdout
    runs = json.loads(out)
    for r in runs:
        with open(os.path.join(tmp, f"{r['policy']}-jobs.csv")) as f:
            r["jobs"] = list(csv.DictReader(f))
    return runs


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def kind_of(name):
    return "stream" if name.startswith("stream") else "gpu" if name.startswith("yolo") else "batch"


def table(title, runs, rows):
    print(f"\n{title}\n")
    print("| | " + " | ".join(f"`{r['policy']}`" for r in runs) + " |")
    print("|---|" + "---:|" * len(runs))
    for label, fn in rows:
        print(f"| {label} | " + " | ".join(fn(r) for r in runs) + " |")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    hrm = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for spec in ["p0-gpu-stacking.json", "p0-gpu-stacking-light.json"]:
            runs = run(hrm, spec, tmp)
            base = runs[-1]  # gpu-exclusive
            table(spec, runs, [
                ("makespan (s)", lambda r: f"{r['makespan_s']:.1f}"),
                ("job completion, mean (s)", lambda r: f"{r['response_mean_s']:.1f}"),
                ("job completion, p95 (s)", lambda r: f"{r['response_p95_s']:.1f}"),
                ("GPU utilisation", lambda r: f"{100 * r['gpu_util']:.1f} %"),
                ("GPU utilisation / one task per GPU",
                 lambda r: f"×{r['gpu_util'] / base['gpu_util']:.2f}"),
                ("mean completion vs one task per GPU",
                 lambda r: f"{100 * (r['response_mean_s'] / base['response_mean_s'] - 1):+.0f} %"),
            ])
        runs = run(hrm, "p0-cpu-sharing.json", tmp)

        def delay(r, kind):
            return mean([float(j["start_s"]) - float(j["submit_s"]) for j in r["jobs"]
                         if kind_of(j["name"]) == kind])

        def response(r, kind):
            return mean([float(j["response_s"]) for j in r["jobs"] if kind_of(j["name"]) == kind])

        table("p0-cpu-sharing.json", runs, [
            ("CPU utilisation", lambda r: f"{100 * r['cpu_util']:.1f} %"),
            ("makespan (s)", lambda r: f"{r['makespan_s']:.1f}"),
            ("batch job completion, mean (s)", lambda r: f"{response(r, 'batch'):.1f}"),
            ("stream job start delay, mean (s)", lambda r: f"{delay(r, 'stream'):.1f}"),
            ("GPU job completion, mean (s)", lambda r: f"{response(r, 'gpu'):.1f}"),
        ])


main()
