/* A node made slower on purpose (--speed, --disk-bps): a CPU quota on the node's cgroup folder and a write throttle on its disk, which its tasks and its bench share. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "agent_private.h"
#include "hrm/log.h"

#define PERIOD_US 100000
#define BENCH_LEAF "hrm-bench" /* beside hrm/: see speed_join_bench */

static double speed_of(const struct agent *a)
{
    return a->cfg.speed > 0 && a->cfg.speed < 1 ? a->cfg.speed : 1;
}

/* The quota for the node's speed: speed x the host's CPUs per period; -1 when not slowed. */
static long long quota_of(const struct agent *a)
{
    double speed = speed_of(a);
    if (speed >= 1)
        return -1;
    long long q = (long long)(speed * a->hw.pus * PERIOD_US + 0.5);
    return q < 1000 ? 1000 : q; /* the kernel's smallest quota is 1 ms */
}

/* Writes the quota (and the period) into a cpu folder; 0 or a negative errno. */
static int write_quota(const struct agent *a, const char *dir, long long quota)
{
    char val[64];
    if (a->hw.cg == CG_V2) {
        if (quota < 0)
            snprintf(val, sizeof(val), "max %d", PERIOD_US);
        else
            snprintf(val, sizeof(val), "%lld %d", quota, PERIOD_US);
        return cg_write_file(dir, "cpu.max", val);
    }
    snprintf(val, sizeof(val), "%d", PERIOD_US);
    cg_write_file(dir, "cpu.cfs_period_us", val);
    snprintf(val, sizeof(val), "%lld", quota);
    return cg_write_file(dir, "cpu.cfs_quota_us", val);
}

/* The CPU quota on the folder every task of the node lives under. */
static void cpu_limit(struct agent *a)
{
    double speed = speed_of(a);
    char dir[1100];
    int rc = cg_node_dir(a, CG_CPU, dir, sizeof(dir));
    if (rc < 0) {
        if (speed < 1)
            hrm_log(HRM_LOG_WARNING, "--speed %g cannot be applied: %s; the node runs at full "
                    "speed", speed, rc == -ENOTSUP ? a->hw.cg_why : strerror(-rc));
        return;
    }
    long long quota = quota_of(a);
    rc = write_quota(a, dir, quota);
    if (rc < 0 && speed < 1)
        hrm_log(HRM_LOG_WARNING, "--speed %g cannot be applied to %s: %s; the node runs at full "
                "speed", speed, dir, strerror(-rc));
    else if (speed < 1)
        hrm_log(HRM_LOG_NOTICE, "speed %g: the node's tasks share %.2f of the host's "
                "%d CPUs (CPU quota %lld us per %d us on %s)", speed, speed * a->hw.pus,
                a->hw.pus, quota, PERIOD_US, dir);
}

/* The whole disk under the state folder, as MAJ:MIN (a partition's parent): what the block
 * throttle takes.  0, or -1 when the folder is on no block device (tmpfs, overlay). */
static int disk_of(const char *path, char *out, size_t len)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return -1;
    unsigned maj = major(st.st_dev), min = minor(st.st_dev);
    char sys[128], dev[32] = "";
    snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/partition", maj, min);
    if (access(sys, F_OK) == 0)
        snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/../dev", maj, min);
    else
        snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/dev", maj, min);
    FILE *f = fopen(sys, "re");
    if (!f)
        return -1;
    if (!fgets(dev, sizeof(dev), f))
        dev[0] = '\0';
    fclose(f);
    dev[strcspn(dev, "\n")] = '\0';
    if (!dev[0])
        return -1;
    snprintf(out, len, "%s", dev);
    return 0;
}

/* The v1 blkio folder this process is in now ("/sys/fs/cgroup/blkio/..."), to go back to. */
static void own_blkio(char *out, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[600];
    out[0] = '\0';
    while (f && fgets(line, sizeof(line), f)) {
        char *p = strstr(line, ":blkio:");
        if (p) {
            p[strcspn(p, "\n")] = '\0';
            snprintf(out, len, "/sys/fs/cgroup/blkio%.500s", p + 7);
        }
    }
    if (f)
        fclose(f);
}

/*
 * The write throttle.  v2: io.max on the node's folder (tasks and bench are below it).  v1:
 * blkio is a hierarchy of its own, which the task cgroups do not join, so the agent moves
 * itself into the node's blkio folder: its tasks and its bench are its children and inherit
 * it (the agent's own writes, a few log and output lines, share the limit).
 */
static void disk_limit(struct agent *a)
{
    int64_t bps = a->cfg.disk_bps;
    if (bps <= 0)
        return;
    char dev[32], dir[1100], val[96];
    const char *why = NULL;
    int rc = 0;
    if (a->hw.cg == CG_NONE || a->cfg.no_cgroup)
        why = a->cfg.no_cgroup ? "cgroups are off (--no-cgroup)" : a->hw.cg_why;
    else if (disk_of(a->state_dir, dev, sizeof(dev)) < 0)
        why = "the state folder is on no block device";
    if (!why && a->hw.cg == CG_V2) {
        if ((rc = cg_node_dir(a, CG_CPU, dir, sizeof(dir))) == 0) {
            snprintf(val, sizeof(val), "%s wbps=%lld", dev, (long long)bps);
            rc = cg_write_file(dir, "io.max", val);
        }
    } else if (!why) {
        snprintf(dir, sizeof(dir), "/sys/fs/cgroup/blkio/hrm/%s/%s", a->cluster, a->name);
        if (access("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device", F_OK) != 0)
            why = "no blkio throttling (blkio.throttle.write_bps_device) on this host";
        else if (agent_mkdirs(dir, 0755) < 0)
            rc = -errno;
        else {
            snprintf(val, sizeof(val), "%s %lld", dev, (long long)bps);
            if ((rc = cg_write_file(dir, "blkio.throttle.write_bps_device", val)) == 0) {
                own_blkio(a->blkio_home, sizeof(a->blkio_home));
                snprintf(val, sizeof(val), "%d", (int)getpid());
                rc = cg_write_file(dir, "cgroup.procs", val);
            }
        }
    }
    if (why || rc < 0)
        hrm_log(HRM_LOG_WARNING, "--disk-bps %lld cannot be applied: %s; the disk is not "
                "throttled", (long long)bps, why ? why : strerror(-rc));
    else
        hrm_log(HRM_LOG_NOTICE, "disk writes of the node's tasks and bench throttled to %lld "
                "bytes/s on device %s (%s)", (long long)bps, dev, dir);
}

void speed_apply(struct agent *a)
{
    cpu_limit(a);
    disk_limit(a);
}

void speed_apply_disk(struct agent *a)
{
    disk_limit(a);
}

/*
 * The bench runs in a folder of its own beside hrm/ (hrm-bench-CLUSTER-NODE), under the same
 * CPU quota as the node's folder, with the highest CPU weight the kernel takes.  The quota is
 * what makes a slow node slow; the weight keeps what else runs on the host (the load the usage
 * samples report as foreign) out of a figure meant to be static: under the node's folder the
 * bench would share the one weight of the whole hrm/ tree with every task of every cluster on
 * the host, and a busy host would make every node measure alike.
 */
void speed_join_bench(struct agent *a, pid_t pid, char leaf[CG_NCTL][1200])
{
    for (int c = 0; c < CG_NCTL; c++)
        leaf[c][0] = '\0';
    if (a->hw.cg == CG_NONE || a->cfg.no_cgroup)
        return;
    char *dir = leaf[CG_CPU], val[64], node[1100];
    bool v2 = a->hw.cg == CG_V2;
    if (v2 && cg_node_dir(a, CG_CPU, node, sizeof(node)) < 0) /* the root passes cpu down */
        return;
    snprintf(dir, 1200, "%.1000s/" BENCH_LEAF "-%s-%.60s",
             v2 ? a->hw.cg_root : "/sys/fs/cgroup/cpu", a->cluster, a->name);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        hrm_log(HRM_LOG_WARNING, "bench: cannot make %s: %s; measuring outside the node's "
                "limits", dir, strerror(errno));
        dir[0] = '\0';
        return;
    }
    cg_write_file(dir, v2 ? "cpu.weight" : "cpu.shares", v2 ? "10000" : "262144");
    write_quota(a, dir, quota_of(a));
    snprintf(val, sizeof(val), "%d", (int)pid);
    int rc = cg_write_file(dir, "cgroup.procs", val);
    if (rc < 0)
        hrm_log(HRM_LOG_WARNING, "bench: cannot join %s: %s; measuring outside the node's "
                "limits", dir, strerror(-rc));
}

void speed_leave_bench(char leaf[CG_NCTL][1200])
{
    for (int c = 0; c < CG_NCTL; c++)
        if (leaf[c][0])
            rmdir(leaf[c]); /* the bench process has exited: the folder is empty */
}

void speed_fini(struct agent *a)
{
    if (!a->blkio_home[0])
        return;
    /* Back where it came from, then the node's blkio folder and the empty levels above. */
    char val[32], dir[1100];
    snprintf(val, sizeof(val), "%d", (int)getpid());
    cg_write_file(a->blkio_home, "cgroup.procs", val);
    snprintf(dir, sizeof(dir), "/sys/fs/cgroup/blkio/hrm/%s/%s", a->cluster, a->name);
    for (int up = 0; up < 3 && rmdir(dir) == 0; up++)
        *strrchr(dir, '/') = '\0';
    a->blkio_home[0] = '\0';
}
