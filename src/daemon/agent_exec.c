/* Agent task execution: clone(CLONE_VM|CLONE_VFORK)/exec in a process group and working directory, affinity, GPUs, cgroups, output files, reaping. */
#define _GNU_SOURCE 1 /* sched_setaffinity, CPU_SET, clone */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/jsontext.h"
#include "hrm/log.h"
#include "hrm/wire.h"

#define KILL_GRACE_US 2000000 /* SIGTERM, then SIGKILL this much later */
#define CHILD_STACK (64 << 10)  /* the launch child runs a few syscalls, then execve */
/* How long a launch that is back may wait for a turn the agent's loop makes anyway before the
 * launcher thread wakes the loop for it (agent_exec_thread.c, the hold): about the life of a
 * trivial task on a busy host, so a short task's start and end are taken in one turn and sent
 * as one report; short beside what a task_started is for (the master's view of a running task;
 * a kill that came while it started waits for its pid).  Its start_us is taken before clone
 * either way. */
#define START_REPORT_HOLD_US 2000

extern char **environ;

int64_t agent_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int agent_mkdirs(const char *path, mode_t mode)
{
    char buf[1200];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    return mkdir(buf, mode) < 0 && errno != EEXIST ? -errno : 0;
}

/* ---- launching ---- */

static bool resolve(const char *prog, const char *pathvar, char *out, size_t len)
{
    if (strchr(prog, '/')) {
        snprintf(out, len, "%s", prog);
        return true;
    }
    const char *p = pathvar ? pathvar : "/usr/local/bin:/usr/bin:/bin";
    while (*p) {
        size_t n = strcspn(p, ":");
        snprintf(out, len, "%.*s/%s", (int)n, p, prog);
        if (access(out, X_OK) == 0)
            return true;
        p += n + (p[n] == ':');
    }
    return false;
}

static char *fmt_env(const char *k, const char *v)
{
    size_t n = strlen(k) + strlen(v) + 2;
    char *s = hrm_alloc(n);
    snprintf(s, n, "%s=%s", k, v);
    return s;
}

static bool env_filtered(const char *entry)
{
    return strncmp(entry, "HRM_", 4) == 0 || strncmp(entry, "CUDA_VISIBLE_DEVICES=", 21) == 0 ||
           agpu_env_filtered(entry);
}

int exec_init(struct agent *a, struct hrm_error *err)
{
    if ((a->devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
        return hrm_errorf(err, -errno, "/dev/null: %s", strerror(errno));
    a->pid = getpid();
    size_t cap = 0, kcap = 0;
    for (char **e = environ; *e; e++) {
        if (env_filtered(*e))
            continue;
        HRM_GROW(a->base_env, cap, a->nbase_env + 1);
        HRM_GROW(a->base_keylen, kcap, a->nbase_env + 1);
        a->base_keylen[a->nbase_env] = strcspn(*e, "=");
        a->base_env[a->nbase_env++] = hrm_strdup(*e);
    }
    a->stack = hrm_alloc(CHILD_STACK);
    a->users = hrm_calloc(1, sizeof(*a->users));
    return 0;
}

void exec_fini(struct agent *a)
{
    launcher_free(a->launcher); /* after exec_stop_all: the tasks' PR_SET_PDEATHSIG is its */
    hrm_free(a->early);
    if (a->devnull >= 0)
        close(a->devnull);
    for (size_t i = 0; i < a->nbase_env; i++)
        hrm_free(a->base_env[i]);
    hrm_free(a->base_env);
    hrm_free(a->base_keylen);
    hrm_free(a->stack);
    hrm_free(a->groups);
    hrm_free(a->users);
    hrm_launch_buf_fini(&a->hot);
}

static bool user_var(const char *key, size_t klen)
{
    return (klen == 4 && (memcmp(key, "HOME", 4) == 0 || memcmp(key, "USER", 4) == 0)) ||
           (klen == 7 && memcmp(key, "LOGNAME", 7) == 0);
}

/*
 * The task's environment: the agent's (copied once at start), then the
 * task's user's HOME, USER and LOGNAME when it switches, then the job's,
 * then hrm's own.  Entries [0, *nborrowed) point into a->base_env.
 */

static char **build_env(const struct agent *a, const struct arun *r,
                        const struct hrm_launch_msg *m, const struct task_user *u,
                        const struct agpu_ask *gpu, size_t *nborrowed)
{
    size_t n = 0, cap = 0;
    char **out = NULL;
    HRM_GROW(out, cap, a->nbase_env + m->nenv + 9 + AGPU_ENV_MAX);
    /* Every launch walks the agent's whole environment: no copy of the name, no formatting,
     * and each name's length known from the start (exec_init).  An agent started from inside
     * a task has that task's HRM_*: exec_init left them out, the new task gets its own. */
    for (size_t i = 0; i < a->nbase_env; i++) {
        const char *e = a->base_env[i];
        size_t klen = a->base_keylen[i];
        if ((m->nenv > 0 && hrm_launch_env_find(m, e, klen) >= 0) ||
            (u->change && user_var(e, klen)))
            continue;
        out[n++] = a->base_env[i];
    }
    *nborrowed = n;
    if (u->change) { /* the task's user's own, unless the job sets them */
        const char *const vars[3][2] = {{"HOME", u->home}, {"USER", u->name}, {"LOGNAME", u->name}};
        for (int i = 0; i < 3; i++)
            if (hrm_launch_env_find(m, vars[i][0], strlen(vars[i][0])) < 0)
                out[n++] = fmt_env(vars[i][0], vars[i][1]);
    }
    for (size_t i = 0; i < m->nenv; i++) {
        const char *k = m->env[2 * i], *v = m->env[2 * i + 1];
        /* hrm's own names below win: a job from an older master could still carry one.  A
         * value that is no string (a description the schema checks only as an object) is
         * left out. */
        if (strncmp(k, "HRM_", 4) != 0 && v)
            out[n++] = fmt_env(k, v);
    }
    char buf[256];
    snprintf(buf, sizeof(buf), "%lld", (long long)r->job);
    out[n++] = fmt_env("HRM_JOB_ID", buf);
    snprintf(buf, sizeof(buf), "%d", r->task);
    out[n++] = fmt_env("HRM_TASK_ID", buf);
    snprintf(buf, sizeof(buf), "%d", r->attempt);
    out[n++] = fmt_env("HRM_ATTEMPT", buf);
    out[n++] = fmt_env("HRM_NODE", a->name);
    agpu_env(gpu, a->gpu, a->gpus, out, &n); /* CUDA_VISIBLE_DEVICES, MPS limits, HRM_GPU_* */
    out[n] = NULL;
    return out;
}

/* Async-signal-safe decimal, for the child's cgroup write. */
static size_t utoa(unsigned long v, char *buf)
{
    char tmp[24];
    size_t n = 0, k = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        buf[k++] = tmp[--n];
    buf[k] = '\0';
    return k;
}

/* {"v":1,"type":"TYPE","job":J,"task":T,"attempt":A: how both reports begin. */
static void put_head(struct hrm_jtext *t, int type, const struct arun *r)
{
    hrm_wire_text_head(t, type);
    hrm_jtext_field_int(t, "job", r->job);
    hrm_jtext_field_int(t, "task", r->task);
    hrm_jtext_field_int(t, "attempt", r->attempt);
}

/* Field by field as the tree below would be built: the same bytes (test_onehost3_launch). */
char *exec_started_text(const struct arun *r, size_t *len)
{
    struct hrm_jtext t = {0};
    put_head(&t, HRM_WIRE_TASK_STARTED, r);
    hrm_jtext_field_int(&t, "pid", r->pid);
    hrm_jtext_field_int(&t, "start_us", r->start_us);
    hrm_jtext_put(&t, "}", 1);
    return hrm_jtext_take(&t, len);
}

void exec_report_started(struct agent *a, struct arun *r)
{
    size_t len;
    char *text = exec_started_text(r, &len);
    r->started_gen = a->flush_gen;
    r->started_idx = a->noutq;
    agent_send_start_text(a, text, len);
}

struct arun *exec_run_add(struct agent *a, const struct arun *r)
{
    HRM_GROW(a->runs, a->cap_runs, a->nruns + 1);
    struct arun *stored = &a->runs[a->nruns++];
    *stored = *r;
    exec_report_started(a, stored);
    return stored;
}

void exec_finish(struct agent *a, struct arun *r)
{
    /* An end in the same flush as the start makes the start redundant. */
    if (r->started_gen == a->flush_gen && r->started_idx < a->noutq) {
        struct hrm_wire_item *it = &a->outq[r->started_idx];
        json_decref((json_t *)it->msg);
        free((char *)it->text);
        *it = (struct hrm_wire_item){0};
    }
    r->ended = true;
    r->status = r->exit == 0 && r->signal == 0 && !r->error[0] ? 0 : 1;
    if (r->error[0])
        hrm_log(HRM_LOG_NOTICE, "task " HRM_TASK_FMT " could not start: %s",
                HRM_TASK_ARGS(r->job, r->task, r->attempt), r->error);
    if (!r->end_us)
        r->end_us = agent_now_us();
    HRM_GROW(a->done, a->cap_done, a->ndone + 1);
    a->done[a->ndone++] = *r;
    if (!a->simulate && !r->no_output)
        aout_run_ended(a, r->job, r->task); /* a burst between two checks is bounded now */
    size_t len;
    char *text = exec_end_text(r, &len);
    agent_send_text(a, text, len);
    if (r->via_nqs)
        anqs_run_ended(a, r); /* its slot frees: the queue system starts the next */
}

void exec_report_failed(struct agent *a, int64_t job, int32_t task, int32_t attempt,
                        const char *why)
{
    struct arun r = {.job = job, .task = task, .attempt = attempt, .exit = 127};
    r.start_us = agent_now_us();
    snprintf(r.error, sizeof(r.error), "%s", why);
    exec_finish(a, &r);
}

char *exec_end_text(const struct arun *r, size_t *len)
{
    struct hrm_jtext t = {0};
    put_head(&t, HRM_WIRE_TASK_END, r);
    hrm_jtext_field_int(&t, "status", r->status);
    hrm_jtext_field_int(&t, "exit", r->exit);
    hrm_jtext_field_int(&t, "signal", r->signal);
    hrm_jtext_put(&t, r->oom ? ",\"oom\":true" : ",\"oom\":false", r->oom ? 11 : 12);
    hrm_jtext_field_int(&t, "start_us", r->start_us);
    hrm_jtext_field_int(&t, "end_us", r->end_us);
    hrm_jtext_field_int(&t, "cpu_us", r->cpu_us);
    hrm_jtext_field_int(&t, "rss", r->rss);
    if (r->error[0]) {
        size_t at = t.len;
        hrm_jtext_put(&t, ",\"error\":", 9);
        if (!hrm_jtext_string(&t, r->error, strlen(r->error)))
            t.len = at; /* json_string refuses it (a cut UTF-8 sequence): the tree leaves it out */
    }
    hrm_jtext_put(&t, "}", 1);
    return hrm_jtext_take(&t, len);
}

/* Keep in step with exec_end_text. */
json_t *exec_end_json(const struct arun *r)
{
    json_t *m = hrm_wire_new(HRM_WIRE_TASK_END);
    json_object_set_new(m, "job", json_integer(r->job));
    json_object_set_new(m, "task", json_integer(r->task));
    json_object_set_new(m, "attempt", json_integer(r->attempt));
    json_object_set_new(m, "status", json_integer(r->status));
    json_object_set_new(m, "exit", json_integer(r->exit));
    json_object_set_new(m, "signal", json_integer(r->signal));
    json_object_set_new(m, "oom", json_boolean(r->oom));
    json_object_set_new(m, "start_us", json_integer(r->start_us));
    json_object_set_new(m, "end_us", json_integer(r->end_us));
    json_object_set_new(m, "cpu_us", json_integer(r->cpu_us));
    json_object_set_new(m, "rss", json_integer(r->rss));
    if (r->error[0])
        json_object_set_new(m, "error", json_string(r->error));
    return m;
}

/* What the launch child needs; it shares the agent's memory (CLONE_VM) and
 * the agent waits (CLONE_VFORK) until it has called execve or exited. */
struct child_args {
    const char *exe, *cwd;
    char **argv, **envp;
    const char *procs[CG_NCTL];
    int fds[3];
    const cpu_set_t *pin;
    const struct task_user *user; /* NULL: stays the agent's user */
    const gid_t *groups;
    pid_t parent;
    volatile int err; /* set by the child when it fails; 0 once execve succeeded */
    volatile enum { STEP_SETUP, STEP_USER, STEP_CWD, STEP_EXEC } step; /* where it failed */
};

/* The child: only async-signal-safe calls until execve (ZeroMQ's threads may
 * hold locks); it runs on its own stack and must not touch the agent's data
 * beyond reading *c and writing c->err.  Not instrumented by ASan: its
 * runtime must not run on this borrowed stack while the agent is suspended. */
__attribute__((no_sanitize_address)) static int child_main(void *arg)
{
    struct child_args *c = arg;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setpgid(0, 0);
    char pidtxt[24];
    size_t plen = utoa((unsigned long)getpid(), pidtxt);
    /* Into its cgroups while it still has the right to. */
    for (int i = 0; i < CG_NCTL; i++) {
        if (!c->procs[i])
            continue;
        int fd = open(c->procs[i], O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t w = write(fd, pidtxt, plen);
            (void)w;
            close(fd);
        }
    }
    if (c->pin)
        sched_setaffinity(0, sizeof(*c->pin), c->pin);
    /* Raw system calls: glibc's setuid() would signal the agent's threads (its setxid
     * broadcast), which are not this process's.  Groups first, the uid last. */
    if (c->user) {
        c->step = STEP_USER;
        if (syscall(SYS_setgroups, c->user->ngroups, c->groups) < 0 ||
            syscall(SYS_setresgid, c->user->gid, c->user->gid, c->user->gid) < 0 ||
            syscall(SYS_setresuid, c->user->uid, c->user->uid, c->user->uid) < 0) {
            c->err = errno;
            _exit(127);
        }
        c->step = STEP_SETUP;
    }
    /* After the switch: a change of credentials clears the parent-death signal. */
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* tasks do not outlive their agent */
    if (getppid() != c->parent) {
        c->err = ESRCH;
        _exit(127);
    }
    c->step = STEP_CWD; /* as the task's user: it must be allowed there */
    if (chdir(c->cwd) < 0) {
        c->err = errno;
        _exit(127);
    }
    c->step = STEP_EXEC;
    if (dup2(c->fds[0], 0) < 0 || dup2(c->fds[1], 1) < 0 || dup2(c->fds[2], 2) < 0) {
        c->err = errno;
        _exit(127);
    }
    execve(c->exe, c->argv, c->envp);
    c->err = errno ? errno : ENOEXEC;
    _exit(127);
}

/* One start, prepared by the agent's loop and run by the launcher thread (or by the loop
 * itself without one): owns everything the child reads. */
struct launch {
    struct launch_item item; /* first: the launcher's list link */
    uint64_t id;             /* its run's launch_id */
    struct child_args ca;    /* points into the fields below */
    char exe[2048];
    char *cwd;
    char **argv, **envp;     /* argv owned; envp's first nborrowed entries are a->base_env's */
    size_t nborrowed;
    char procs[CG_NCTL][1200];
    cpu_set_t set;
    struct task_user user;
    gid_t *groups;
    int fds[3];
    bool discard;            /* fds[1], fds[2] are /dev/null, not files of its own */
    void *stack;             /* borrowed: a->stack, used by one launch at a time */
    pid_t pid;               /* the child, or -1 when clone failed (errno in clone_errno) */
    int clone_errno;
};

/* On the launcher thread: touches nothing but the launch.  clone(CLONE_VM | CLONE_VFORK), as
 * posix_spawn does: no copy of the agent's page tables, and this thread resumes once execve
 * has succeeded (its CLOEXEC descriptors closed) or the child has exited. */
static void launch_work(void *ctx, struct launch_item *it)
{
    (void)ctx;
    struct launch *l = (struct launch *)it;
    l->pid = clone(child_main, (char *)l->stack + CHILD_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD,
                   &l->ca);
    l->clone_errno = errno;
}

static void launch_free(struct launch *l)
{
    if (!l->discard) {
        close(l->fds[1]);
        close(l->fds[2]);
    }
    for (size_t i = 0; l->argv && l->argv[i]; i++)
        hrm_free(l->argv[i]);
    hrm_free(l->argv);
    for (size_t i = l->nborrowed; l->envp && l->envp[i]; i++)
        hrm_free(l->envp[i]);
    hrm_free(l->envp);
    hrm_free(l->cwd);
    hrm_free(l->groups);
    hrm_free(l);
}

static size_t run_index(const struct agent *a, pid_t pid)
{
    for (size_t i = 0; i < a->nruns; i++)
        if (a->runs[i].pid == pid)
            return i;
    return SIZE_MAX;
}

/* Run i's process has ended with status st: what it started dies with it, its end is reported. */
static void run_reaped(struct agent *a, size_t i, int st, const struct rusage *ru, int64_t end_us)
{
    struct arun *r = &a->runs[i];
    if (WIFEXITED(st))
        r->exit = WEXITSTATUS(st);
    else if (WIFSIGNALED(st))
        r->signal = WTERMSIG(st);
    r->cpu_us = (int64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000 +
                ru->ru_utime.tv_usec + ru->ru_stime.tv_usec;
    r->rss = (int64_t)ru->ru_maxrss * 1024;
    r->end_us = end_us;
    /* What the task started dies with it: its process group, then everything in its
     * cgroup (which catches what left the group), and only then the cgroup goes. */
    kill(-r->pid, SIGKILL);
    if (r->cg) {
        r->oom = cg_oom(a, r);
        cg_release(a, r);
    }
    struct arun done = *r;
    a->runs[i] = a->runs[--a->nruns];
    if (done.gpu_mask)
        bind_rebalance(a); /* its GPU's cores may be lent again */
    exec_finish(a, &done);
}

/* Takes pid's exit if exec_reap had to keep it (reaped before its launch came back). */
static bool early_exit_take(struct agent *a, pid_t pid, struct early_exit *out)
{
    for (size_t i = 0; i < a->nearly; i++)
        if (a->early[i].pid == pid) {
            *out = a->early[i];
            a->early[i] = a->early[--a->nearly];
            return true;
        }
    return false;
}

/* A launch is back: the run gets its pid and its task_started, or its failure is reported. */
static void launch_done(struct agent *a, struct launch *l)
{
    size_t i = 0;
    while (i < a->nruns && !(a->runs[i].launching && a->runs[i].launch_id == l->id))
        i++;
    if (i == a->nruns) { /* cannot happen: a launching run leaves a->runs only here */
        launch_free(l);
        return;
    }
    struct arun *r = &a->runs[i];
    r->launching = false;
    a->nlaunching--;
    /* Never a run without a pid of its own: its kills (kill(-pid)) would reach another group. */
    int child_errno = l->pid < 0 ? (l->clone_errno ? l->clone_errno : EAGAIN) : l->ca.err;
    if (child_errno) {
        if (l->pid < 0) {
            snprintf(r->error, sizeof(r->error), "clone: %s", strerror(child_errno));
        } else {
            struct early_exit e;
            if (!early_exit_take(a, l->pid, &e))
                waitpid(l->pid, NULL, 0); /* it has exited (_exit(127)): no wait */
            bool in_cwd = l->ca.step == STEP_CWD;
            if (l->ca.step == STEP_USER)
                snprintf(r->error, sizeof(r->error), "cannot run as user '%.40s' (uid %u): %s",
                         l->user.name, (unsigned)l->user.uid, strerror(child_errno));
            else
                snprintf(r->error, sizeof(r->error), "cannot start: %s%s%.100s%s",
                         strerror(child_errno), in_cwd ? " (working directory " : "",
                         in_cwd && l->cwd ? l->cwd : "", in_cwd ? ")" : "");
        }
        r->exit = 127;
        cg_release(a, r);
        struct arun failed = *r;
        a->runs[i] = a->runs[--a->nruns];
        launch_free(l);
        if (failed.gpu_mask)
            bind_rebalance(a);
        exec_finish(a, &failed);
        return;
    }
    /* No setpgid(pid, pid) here: CLONE_VFORK resumed the launch only once the child had made
     * its group (child_main's first steps) and called execve, so no kill can miss it. */
    r->pid = l->pid;
    launch_free(l);
    exec_report_started(a, r);
    if (r->kill_sig)
        exec_kill(a, r, r->kill_sig); /* a cancel that came while it was starting */
    struct early_exit e;
    if (early_exit_take(a, r->pid, &e))
        run_reaped(a, i, e.status, &e.ru, e.end_us);
    else if (a->gpus > 0)
        bind_rebalance(a); /* a GPU task came or went while this one was starting */
}

static bool run_init(const struct agent *a, int64_t job, int64_t task, int64_t attempt,
                     int64_t gpu_mask, const struct nqs_tag *tag, struct arun *out)
{
    struct arun r = {0};
    if (tag) {
        r.via_nqs = true;
        r.nqs_task = tag->task;
        r.nqs_entry = tag->entry;
        r.nqs_seq = tag->seq;
    }
    r.job = job;
    r.task = (int32_t)task;
    r.attempt = (int32_t)attempt;
    r.gpu_mask = (uint32_t)gpu_mask;
    for (size_t i = 0; i < a->nruns; i++)
        if (a->runs[i].job == r.job && a->runs[i].task == r.task &&
            a->runs[i].attempt == r.attempt)
            return false; /* a launch we already run (repeated after a reconnect) */
    r.start_us = agent_now_us();
    r.start_mono_us = r.sample_mono_us = hrm_mono_us();
    *out = r;
    return true;
}

bool exec_run_init(const struct agent *a, const json_t *msg, const struct nqs_tag *tag,
                   struct arun *out)
{
    return run_init(a, json_integer_value(json_object_get(msg, "job")),
                    json_integer_value(json_object_get(msg, "task")),
                    json_integer_value(json_object_get(msg, "attempt")),
                    json_integer_value(json_object_get(msg, "gpu_mask")), tag, out);
}

void exec_launch(struct agent *a, const json_t *msg, const struct nqs_tag *tag)
{
    if (a->simulate) {
        simexec_launch(a, msg, tag);
        return;
    }
    /* The tree's fields as wire_launch.c reads a frame's: its strings borrowed from the tree
     * (json_*_value: NULL or 0 where a field is missing or of another kind). */
    const json_t *cmd = json_object_get(msg, "cmd"), *env = json_object_get(msg, "env");
    const json_t *share = json_object_get(msg, "gpu_share"), *output = json_object_get(msg, "output");
    size_t argc = json_array_size(cmd), nenv = json_object_size(env);
    const char **strs = hrm_calloc(argc + 1 + 2 * nenv, sizeof(*strs));
    struct hrm_launch_msg m = {
        .type = HRM_WIRE_TASK_LAUNCH,
        .job = json_integer_value(json_object_get(msg, "job")),
        .task = json_integer_value(json_object_get(msg, "task")),
        .attempt = json_integer_value(json_object_get(msg, "attempt")),
        .gpu_mask = json_integer_value(json_object_get(msg, "gpu_mask")),
        .cpu = json_integer_value(json_object_get(msg, "cpu")),
        .mem = json_integer_value(json_object_get(msg, "mem")),
        .gpu_share = json_integer_value(share),
        .gpu_mem = json_integer_value(json_object_get(msg, "gpu_mem")),
        .has_gpu_share = share != NULL,
        .has_output = json_is_boolean(output),
        .output = json_is_true(output),
        .cwd = json_string_value(json_object_get(msg, "cwd")),
        .user = json_string_value(json_object_get(msg, "user")),
        .argv = strs,
        .argc = argc,
        .env = strs + argc + 1,
        .nenv = nenv,
        .has_env = env != NULL,
    };
    for (size_t i = 0; i < argc; i++)
        strs[i] = json_string_value(json_array_get(cmd, i));
    const char *k;
    const json_t *v;
    size_t i = 0;
    json_object_foreach((json_t *)env, k, v)
    {
        strs[argc + 1 + 2 * i] = k;
        strs[argc + 2 + 2 * i] = json_string_value(v);
        i++;
    }
    exec_launch_msg(a, &m, tag);
    hrm_free(strs);
}

void exec_launch_msg(struct agent *a, const struct hrm_launch_msg *m, const struct nqs_tag *tag)
{
    struct arun r;
    if (!run_init(a, m->job, m->task, m->attempt, m->gpu_mask, tag, &r))
        return;
    struct agpu_ask gpu;
    if (agpu_ask_of_launch(m, &gpu, r.error, sizeof(r.error)) < 0 ||
        agpu_env_check(m, r.error, sizeof(r.error)) < 0) {
        r.exit = 127; /* the master checks too: this is the node's own defence */
        exec_finish(a, &r);
        return;
    }
    struct task_user user;
    if (exec_user_resolve(a, m->user, &user, r.error, sizeof(r.error)) < 0) {
        r.exit = 127;
        exec_finish(a, &r);
        return;
    }
    const char *cwd = m->cwd;
    /* output: false writes to /dev/null: no folder, no files (nor their names). */
    bool discard = m->has_output && !m->output;
    char dir[1200], out[1300], err[1300], exe[2048];
    if (!discard) {
        snprintf(dir, sizeof(dir), "%s/%lld", a->work_dir, (long long)r.job);
        snprintf(out, sizeof(out), "%s/%d.out", dir, r.task);
        snprintf(err, sizeof(err), "%s/%d.err", dir, r.task);
    }
    long pathv = hrm_launch_env_find(m, "PATH", 4);
    const char *prog = m->argc > 0 ? m->argv[0] : NULL;
    if (!prog || !resolve(prog, pathv >= 0 ? m->env[2 * pathv + 1] : getenv("PATH"), exe,
                          sizeof(exe))) {
        /* An empty command (the schema allows it) has nothing to run. */
        snprintf(r.error, sizeof(r.error), "%s: command not found", prog ? prog : "(none)");
        r.exit = 127;
        exec_finish(a, &r);
        return;
    }
    /* The job's folder is made once, by its first task on this node. */
    if (!discard && a->dir_job != r.job) {
        if (agent_mkdirs(dir, 0700) < 0) { /* private: tasks' output is their owners' */
            snprintf(r.error, sizeof(r.error), "output folder: %.100s", strerror(errno));
            r.exit = 127;
            exec_finish(a, &r);
            return;
        }
        a->dir_job = r.job;
    }
    int fds[3] = {a->devnull, a->devnull, a->devnull};
    /* O_APPEND: the task writes at the end even after agent_output.c drops the file's head. */
    int oflags = O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC;
    if (!discard && ((fds[1] = open(out, oflags, 0600)) < 0 ||
                     (fds[2] = open(err, oflags, 0600)) < 0)) {
        snprintf(r.error, sizeof(r.error), "output files: %.100s", strerror(errno));
        r.exit = 127;
        if (fds[1] >= 0)
            close(fds[1]);
        a->dir_job = 0; /* the folder may have been removed: make it again next time */
        exec_finish(a, &r);
        return;
    }
    if (!discard && user.change) { /* the task's files are its user's */
        if (fchown(fds[1], user.uid, user.gid) < 0 || fchown(fds[2], user.uid, user.gid) < 0)
            hrm_log(HRM_LOG_WARNING, "task " HRM_TASK_FMT " output: chown: %s",
                    HRM_TASK_ARGS(r.job, r.task, r.attempt), strerror(errno));
    }
    /* Everything the child reads is the launch's own: the message, the agent's groups buffer
     * and this stack frame are gone or reused by the time the launcher thread starts it. */
    struct launch *l = hrm_calloc(1, sizeof(*l));
    snprintf(l->exe, sizeof(l->exe), "%s", exe);
    l->cwd = cwd ? hrm_strdup(cwd) : NULL; /* the wire requires one: chdir says if not */
    l->argv = hrm_calloc(m->argc + 1, sizeof(*l->argv));
    for (size_t i = 0; i < m->argc; i++)
        l->argv[i] = hrm_strdup(m->argv[i] ? m->argv[i] : "");
    l->envp = build_env(a, &r, m, &user, &gpu, &l->nborrowed);
    cg_setup(a, &r, m->cpu, m->mem, l->procs);
    struct agpu_cpus cores;
    bool pin;
    bind_run(a, &r, l->procs, &pin, &cores); /* its unit's cores: cpuset group, else affinity */
    CPU_ZERO(&l->set);
    for (int c = 0; pin && c < AGPU_MAX_CPUS && c < CPU_SETSIZE; c++)
        if (cores.bits[c / 64] >> (c % 64) & 1)
            CPU_SET(c, &l->set);
    l->user = user;
    if (user.change && user.ngroups > 0) {
        l->groups = hrm_calloc(user.ngroups, sizeof(*l->groups));
        memcpy(l->groups, a->groups, user.ngroups * sizeof(*l->groups));
    }
    l->discard = discard;
    memcpy(l->fds, fds, sizeof(fds));
    l->ca = (struct child_args){.exe = l->exe,
                                .cwd = l->cwd,
                                .argv = l->argv,
                                .envp = l->envp,
                                .fds = {fds[0], fds[1], fds[2]},
                                .pin = pin ? &l->set : NULL,
                                .user = user.change ? &l->user : NULL,
                                .groups = l->groups,
                                .parent = a->pid};
    for (int i = 0; i < CG_NCTL; i++)
        l->ca.procs[i] = l->procs[i][0] ? l->procs[i] : NULL;
    l->stack = a->stack;
    /* The run starts before clone, not when the agent learns its pid: a short task may have
     * run to its end by then (the launch waits for execve, then for a core), leaving a runtime
     * shorter than the task's own CPU time. */
    r.start_us = agent_now_us();
    r.start_mono_us = r.sample_mono_us = hrm_mono_us();
    r.no_output = discard;
    r.launching = true;
    r.launch_id = l->id = ++a->launch_seq;
    /* In a->runs from now: a repeated launch is known, a kill waits for the pid (exec_kill),
     * a registration lists it. */
    HRM_GROW(a->runs, a->cap_runs, a->nruns + 1);
    a->runs[a->nruns++] = r;
    a->nlaunching++;
    if (r.gpu_mask)
        bind_rebalance(a); /* its GPU's cores are no longer lent to CPU tasks */
    if (a->launcher) {
        launcher_submit(a->launcher, &l->item);
        return;
    }
    launch_work(NULL, &l->item);
    launch_done(a, l);
}

void exec_launcher_start(struct agent *a)
{
    struct hrm_error err;
    if (a->simulate || a->launcher)
        return;
    if (!(a->launcher = launcher_new(launch_work, NULL, START_REPORT_HOLD_US, &err)))
        hrm_log(HRM_LOG_WARNING, "%s: tasks start on the agent's loop, which waits for each "
                "execve", err.text);
}

/*
 * Distributed scheduling (a node queue system) keeps the start reports immediate: its runs on
 * P4's testbed were not measured on a quiet host with the hold (docs/benchmarks.md, "The
 * agents' wake-ups per task"), and its node answers schedulers' probes from the same loop.
 */
void exec_launcher_follow_role(struct agent *a)
{
    bool off = a->nqs != NULL;
    if (!a->launcher || off == a->launch_hold_off)
        return;
    a->launch_hold_off = off;
    launcher_set_hold(a->launcher, off ? 0 : START_REPORT_HOLD_US);
}

int exec_launcher_fd(const struct agent *a)
{
    return a->launcher ? launcher_fd(a->launcher) : -1;
}

/* The launches the launcher thread has done, in the order they were asked for. */
static void launches_collect(struct agent *a)
{
    if (!a->launcher)
        return;
    struct launch_item *it = launcher_take(a->launcher);
    a->counts.collects += it != NULL;
    while (it) {
        a->counts.launches_back++;
        struct launch_item *next = it->next;
        launch_done(a, (struct launch *)it);
        it = next;
    }
    if (a->nlaunching == 0)
        a->nearly = 0; /* no launch left to claim them: children that were not tasks */
}

void exec_collect(struct agent *a)
{
    if (!a->simulate)
        launches_collect(a);
}

void exec_kill(struct agent *a, struct arun *r, int sig)
{
    if (a->simulate) {
        simexec_kill(r, sig);
        return;
    }
    if (r->launching) { /* its group exists once the launch is back: launch_done sends it */
        if (!r->kill_sig || sig == SIGKILL)
            r->kill_sig = sig;
        return;
    }
    if (r->pid > 0)
        kill(-r->pid, sig);
    cg_signal(a, r, sig); /* also what left the process group (setsid, daemons) */
    if (sig == SIGTERM && !r->kill_at_us)
        r->kill_at_us = hrm_mono_us() + KILL_GRACE_US;
}

void exec_deadlines(struct agent *a)
{
    if (a->simulate)
        return;
    int64_t now = hrm_mono_us();
    for (size_t i = 0; i < a->nruns; i++)
        if (a->runs[i].kill_at_us && now >= a->runs[i].kill_at_us) {
            kill(-a->runs[i].pid, SIGKILL);
            cg_signal(a, &a->runs[i], SIGKILL);
            a->runs[i].kill_at_us = 0;
        }
}

void exec_reap(struct agent *a)
{
    if (a->simulate) {
        simexec_reap(a);
        return;
    }
    launches_collect(a);
    for (;;) {
        int st;
        struct rusage ru;
        pid_t pid = wait4(-1, &st, WNOHANG, &ru);
        if (pid <= 0)
            break;
        a->counts.reaped++;
        size_t i = run_index(a, pid);
        if (i != SIZE_MAX) {
            run_reaped(a, i, st, &ru, agent_now_us());
        } else if (a->nlaunching > 0) {
            /* The launcher thread has started it, and the loop has not taken the launch back
             * yet: its run claims it then (launch_done). */
            HRM_GROW(a->early, a->cap_early, a->nearly + 1);
            a->early[a->nearly++] =
                (struct early_exit){.pid = pid, .status = st, .ru = ru, .end_us = agent_now_us()};
        }
    }
    launches_collect(a);
}

void exec_stop_all(struct agent *a)
{
    if (a->simulate) {
        for (size_t i = 0; i < a->nruns; i++)
            simexec_kill(&a->runs[i], SIGTERM);
        simexec_reap(a);
        return;
    }
    if (a->launcher) { /* every run has its pid, or has failed, before the kills */
        launcher_wait_idle(a->launcher);
        launches_collect(a);
    }
    for (size_t i = 0; i < a->nruns; i++)
        exec_kill(a, &a->runs[i], SIGTERM);
    int64_t deadline = hrm_mono_us() + KILL_GRACE_US;
    while (a->nruns > 0 && hrm_mono_us() < deadline) {
        exec_reap(a);
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < a->nruns; i++)
        exec_kill(a, &a->runs[i], SIGKILL);
    while (a->nruns > 0) {
        size_t before = a->nruns;
        exec_reap(a);
        if (a->nruns == before) {
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
    }
}
