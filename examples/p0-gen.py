#!/usr/bin/env python3
"""Writes the P0 (HRM) example specs: examples/p0-gpu-stacking.json and
examples/p0-cpu-sharing.json (docs/reproduction-p0.md explains the choices).

Run from the repository root:  python3 examples/p0-gen.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# The paper's cluster: 15 nodes x 2 Xeon 8-core (two NUMA domains), 32 GB,
# 2 RTX 2080 Ti of 10 GB, one per socket; each GPU unit binds 4 cores.
CLUSTER = {
    "comment": "P0 testbed: 15 x (2 x 8 cores, 32 GB, 2 x 10 GB GPUs, one per NUMA domain)",
    "network": {"latency": "200us"},
    "nodes": [{"name": "n", "count": 15, "cores": 16, "numa": 2, "mem": "32G",
               "gpus": 2, "gpu_mem": "10G", "gpu_numa": [0, 1], "cores_per_gpu": 4}],
}


def yolo_job(name, shards, submit_s):
    """YOLOv3-like inference over 10,000 images split in `shards` tasks.
    Per batch of 4 images: 180 ms of CPU (JPEG decode, resize, NMS and
    drawing) and 120 ms of GPU kernels (about 33 images/s on a 2080 Ti)."""
    batches = 10000 // 4 // shards
    return {"name": name, "submit": f"{submit_s}s", "tasks": shards,
            "task": {"cpu": 2, "mem": "4G", "gpus": 1, "gpu_mem": "2G",
                     "gpu_phases": {"cpu": "180ms", "gpu": "120ms", "count": batches},
                     "logic": "yolo"}}


def gpu_stacking(interval_s):
    """30 jobs, one every interval_s: 2 s is a burst (the cluster is the
    bottleneck), 30 s a light load (about 83 % of the GPUs without stacking)."""
    jobs = []
    sizes = [5, 10, 20]  # J34-J36 of P1 use the same shard counts
    for i in range(30):
        jobs.append(yolo_job(f"yolo{i + 1}", sizes[i % 3], interval_s * i))
    return {
        "comment": "P0: GPU queue stacking vs one task per GPU (YOLO-like inference jobs), "
                   f"a job every {interval_s} s",
        "cluster": CLUSTER,
        "workload": {"jobs": jobs},
        "sim": {"policies": ["hrm", "gpu-exclusive"]},
    }


def stage(name, tasks, cpu, mem, dur_s, deps=()):
    s = {"name": name, "tasks": tasks,
         "task": {"cpu": cpu, "mem": mem, "duration": f"{dur_s}s"}}
    if deps:
        s["deps"] = list(deps)
    return s


def batch_job(kind, i, submit_s):
    name = f"{kind}{i}"
    if kind == "wordcount":
        stages = [stage("map", 24, 1, "2G", 40), stage("reduce", 6, 1, "2G", 20, ["map"])]
    elif kind == "sort":
        stages = [stage("map", 16, 1, "2G", 30), stage("reduce", 16, 2, "4G", 40, ["map"])]
    else:  # TPC-H-like query: scan, join, aggregate
        stages = [stage("scan", 32, 1, "2G", 20), stage("join", 8, 2, "4G", 30, ["scan"]),
                  stage("agg", 1, 1, "2G", 10, ["join"])]
    return {"name": name, "kind": "batch", "submit": f"{submit_s}s", "stages": stages}


def stream_job(i, submit_s):
    """A streaming query: 6 long-running operators of 2 cores (Dataflow model)."""
    return {"name": f"stream{i}", "kind": "stream", "submit": f"{submit_s}s", "tasks": 6,
            "task": {"cpu": 2, "mem": "4G", "duration": "600s"}}


def cpu_sharing():
    jobs = []
    kinds = ["wordcount", "sort", "tpch"]
    for i in range(60):
        jobs.append(batch_job(kinds[i % 3], i // 3 + 1, 5 * i))
    for i in range(5):
        jobs.append(stream_job(i + 1, 60 * i))
    for i in range(3):  # a little GPU work: the GPU units are mostly idle
        jobs.append(yolo_job(f"yolo{i + 1}", 5, 200 * i))
    return {
        "comment": "P0: batch (WordCount, Sort, TPC-H-like) and stream jobs sharing the cluster",
        "cluster": CLUSTER,
        "workload": {"jobs": jobs},
        "sim": {"policies": ["hrm", "hrm-static", "hrm-unaware", "fifo"]},
    }


for name, spec in [("p0-gpu-stacking.json", gpu_stacking(2)),
                   ("p0-gpu-stacking-light.json", gpu_stacking(30)),
                   ("p0-cpu-sharing.json", cpu_sharing())]:
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")
