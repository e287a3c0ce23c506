#!/usr/bin/env python3
"""Writes the P3 (NPARSA) reproduction specs: examples/p3-*.json.

The paper's heterogeneous Spark clusters (Tables 3 and 4) and its four
workloads (docs/reproduction-p2-p3.md).  Deterministic.  Run from anywhere:
python3 examples/p3-gen.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

SSD, HDD = "500MB/s", "120MB/s"
NET = {"disk_bw": SSD, "rack_bw": "1Gb/s", "core_bw": "1Gb/s", "latency": "500us"}


def node(name, ghz, ref_ghz, cores, mem, disk, kind):
    return {"name": name, "cores": cores, "mem": mem, "disk": disk, "disk_type": kind,
            "disk_bw": SSD if kind == "ssd" else HDD, "cpu_speed": round(ghz / ref_ghz, 4)}


# Table 3: four VMs at 3.2 GHz; slave 2 has one core, slave 3 an HDD.
VM4 = [node("master", 3.2, 3.2, 2, "5G", "50G", "ssd"),
       node("slave1", 3.2, 3.2, 2, "4G", "50G", "ssd"),
       node("slave2", 3.2, 3.2, 1, "4G", "50G", "ssd"),
       node("slave3", 3.2, 3.2, 2, "4G", "50G", "hdd")]
# Section 2.2.3: the same without slave 1.
VM3 = [VM4[0], VM4[2], VM4[3]]
# Table 4: the physical cluster; speeds relative to 2.8 GHz.
PHYS = [node("master", 2.8, 2.8, 6, "12G", "100G", "ssd"),
        node("slave1", 2.4, 2.8, 4, "4G", "100G", "hdd"),
        node("slave2", 2.8, 2.8, 2, "8G", "100G", "ssd")]

# Workloads.  A job asks 4 cores (the paper's spark.cores.max) as 4 one-core
# executors; WordCount, K-means and PageRank ask 4 GB in all (J = 1: CPU),
# Sort 8 GB (J = 2: memory).  Each executor processes a quarter of the input:
# it reads its share from HDFS (3 replicas on random nodes; Sort also reads
# back its sort spill, as much again) and computes on a speed-1.0 core for
# the program's seconds per GB.
PROGRAMS = {
    "wordcount": dict(mem_gb=1, s_per_gb=12, reads=1, sizes=[2, 4, 6, 8, 10]),
    "sort": dict(mem_gb=2, s_per_gb=3, reads=2, sizes=[2, 4, 6, 8, 10]),
    "kmeans": dict(mem_gb=1, s_per_gb=40, reads=1, sizes=[1, 2, 3, 4, 5]),
    "pagerank": dict(mem_gb=1, s_per_gb=40, reads=1, sizes=[0.5, 1, 1.5, 2, 2.5]),
}
EXECUTORS = 4
POLICIES = ["spread", "nparsa-notype", "nparsa"]


def job(prog, size_gb, index, submit=None):
    p = PROGRAMS[prog]
    share_mb = size_gb * 1024 / EXECUTORS
    blocks = max(1, round(share_mb / 128))
    j = {"name": "%s-%s-%d" % (prog, ("%g" % size_gb).replace(".", "_"), index),
         "tasks": EXECUTORS,
         "task": {"logic": prog, "cpu": 1, "mem": "%dG" % p["mem_gb"],
                  "duration": "%dms" % round(size_gb / EXECUTORS * p["s_per_gb"] * 1000),
                  "input": {"size": "%dM" % round(share_mb * p["reads"] / blocks),
                            "blocks": blocks, "replicas": 3}}}
    if submit is not None:
        j["submit"] = submit
    return j


def write(name, obj):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    print("wrote", os.path.join(HERE, name))


def cluster(nodes, comment):
    return {"comment": comment, "network": NET, "nodes": nodes}


def main():
    write("p3-vm4-cluster.json", cluster(VM4, "NPARSA Table 3: four heterogeneous VMs."))
    write("p3-vm3-cluster.json", cluster(VM3, "NPARSA 2.2.3: Table 3 without slave 1."))
    write("p3-phys-cluster.json", cluster(PHYS, "NPARSA Table 4: three physical nodes."))
    sim = {"policies": POLICIES}
    for prog, p in PROGRAMS.items():
        # Single-job runs: each job alone (closed loop of one), sizes in turn.
        wl = {"max_parallel": 1, "jobs": [job(prog, s, i + 1) for i, s in enumerate(p["sizes"])]}
        write("p3-%s-workload.json" % prog, wl)
        write("p3-vm4-%s.json" % prog,
              {"comment": "NPARSA single-job %s runs on the 4-VM cluster." % prog,
               "cluster": "p3-vm4-cluster.json", "workload": "p3-%s-workload.json" % prog,
               "sim": sim})
    write("p3-vm3-pagerank.json",
          {"comment": "NPARSA Fig. 7: PageRank on the 3-VM cluster.",
           "cluster": "p3-vm3-cluster.json", "workload": "p3-pagerank-workload.json",
           "sim": sim})
    # Physical cluster: the paper adds a sixth, larger PageRank.
    pr = {"max_parallel": 1,
          "jobs": [job("pagerank", s, i + 1) for i, s in enumerate([0.5, 1, 1.5, 2, 2.5, 3])]}
    write("p3-phys-pagerank-workload.json", pr)
    write("p3-phys-pagerank.json",
          {"comment": "NPARSA Fig. 8: PageRank on the physical cluster.",
           "cluster": "p3-phys-cluster.json", "workload": "p3-phys-pagerank-workload.json",
           "sim": sim})
    # Fig. 6: WordCount and Sort jobs running side by side.
    par = {"max_parallel": 2, "fair_m": 2,
           "jobs": [job(prog, s, i + 1) for i, s in enumerate([2, 4, 6, 8])
                    for prog in ("wordcount", "sort")]}
    write("p3-parallel-workload.json", par)
    write("p3-vm4-parallel.json",
          {"comment": "NPARSA Fig. 6: WordCount and Sort in parallel on the 4-VM cluster.",
           "cluster": "p3-vm4-cluster.json", "workload": "p3-parallel-workload.json",
           "sim": sim})


if __name__ == "__main__":
    main()
