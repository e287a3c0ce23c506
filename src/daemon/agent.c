/* hrm agent: registers with the master, runs what it is told, reports starts, usage and ends; one reactor thread. */
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "agent_private.h"
#include "probe_listen.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/hash.h"
#include "hrm/log.h"
#include "hrm/wire.h"
#include "peer.h"
#include "statedir.h"

/* An unanswered registration is sent again after 3 s, then 6, 12, up to 24 s.  ZeroMQ keeps a
 * registration sent before the connection is up and delivers it, so a resend is for a lost
 * connection only; when thousands of agents register at once the master answers late, and
 * resending every second would only queue more registrations behind the first ones. */
#define REGISTER_RETRY_US 3000000
/* The longest quiet a welcome may ask for that an agent honours (a master asks 10 s at most). */
#define WELCOME_QUIET_MAX_MS 60000
#define REGISTER_RETRY_MAX_US 24000000
/* Messages from the master handled per turn: launches are cheap but a burst
 * of thousands should not delay reaping and heartbeats. */
#define TURN_MAX_MSGS 512
/* Reports per frame: a task_end is ~250 bytes, so a batch stays far below
 * the codec's 1 MiB limit. */
#define BATCH_MAX_ITEMS 256

static void send_now(struct agent *a, const json_t *msg)
{
    a->counts.frames++;
    int rc = hrm_conn_send(a->conn, msg);
    if (rc < 0)
        hrm_log(HRM_LOG_DEBUG, "%s not sent (%s): the master will learn at registration",
                json_string_value(json_object_get(msg, "type")), hrm_strerror(rc));
}

void agent_send(struct agent *a, json_t *msg)
{
    HRM_GROW(a->outq, a->cap_outq, a->noutq + 1);
    a->outq[a->noutq++] = (struct hrm_wire_item){.msg = msg};
}

void agent_send_text(struct agent *a, char *text, size_t len)
{
    HRM_GROW(a->outq, a->cap_outq, a->noutq + 1);
    a->outq[a->noutq++] = (struct hrm_wire_item){.text = text, .len = len};
}

void agent_send_start_text(struct agent *a, char *text, size_t len)
{
    if (a->noutq == 0) /* the first report since the last frame: the wait counts from now */
        a->starts_since_us = hrm_mono_us();
    a->nstarts_queued++;
    agent_send_text(a, text, len);
}

static void send_item(struct agent *a, const struct hrm_wire_item *it)
{
    if (it->msg) {
        send_now(a, it->msg);
        return;
    }
    a->counts.frames++;
    int rc = hrm_conn_send_raw(a->conn, it->text, it->len);
    if (rc < 0)
        hrm_log(HRM_LOG_DEBUG, "a report was not sent (%s): the master will learn at "
                "registration", hrm_strerror(rc));
}

static void drop_queued(struct agent *a)
{
    for (size_t i = 0; i < a->noutq; i++) {
        json_decref((json_t *)a->outq[i].msg);
        free((char *)a->outq[i].text);
    }
    a->noutq = 0;
    a->nstarts_queued = 0;
}

/*
 * When the turn's reports are only task_starteds, they wait for the next frame that goes anyway
 * (an end, a heartbeat), up to START_FRAME_WAIT_US from the first of them (INT64_MAX: nothing
 * waits).  A short task's end then withdraws its start (exec_finish), and a burst of starts
 * shares its frame with the ends that follow: a frame the agent sends costs a wake-up of its
 * ZeroMQ thread and a turn of the master's loop.  A simulated agent's reports leave at once,
 * and so do those of a node that runs a node queue system (exec_launcher_follow_role: why).
 */
#define START_FRAME_WAIT_US 2000

int64_t agent_flush_due(const struct agent *a)
{
    if (a->simulate || a->nqs || a->noutq == 0 || a->noutq != a->nstarts_queued)
        return a->noutq > 0 ? 0 : INT64_MAX;
    return a->starts_since_us + START_FRAME_WAIT_US;
}

/*
 * The turn's reports leave together: one frame (one encryption, one wake-up
 * of the master, one turn of its loop) for a burst of starts and ends.
 * Items with neither a tree nor a text were withdrawn (agent_exec.c: a
 * task_started whose task_end is in the same flush).
 */
void agent_flush(struct agent *a)
{
    size_t n = a->noutq;
    a->flush_gen++;
    if (n == 0)
        return;
    for (size_t i = 0; i < n;) {
        struct hrm_wire_item items[BATCH_MAX_ITEMS];
        size_t k = 0;
        for (; i < n && k < BATCH_MAX_ITEMS; i++)
            if (a->outq[i].msg || a->outq[i].text)
                items[k++] = a->outq[i];
        size_t len;
        char *text = k > 1 ? hrm_wire_batch_text(items, k, &len) : NULL;
        if (text) {
            a->counts.frames++;
            int rc = hrm_conn_send_raw(a->conn, text, len);
            if (rc < 0)
                hrm_log(HRM_LOG_DEBUG, "a batch was not sent (%s): the master will learn at "
                        "registration", hrm_strerror(rc));
            free(text);
        } else { /* one item, or too large together (logs): one frame each */
            for (size_t q = 0; q < k; q++)
                send_item(a, &items[q]);
        }
    }
    drop_queued(a);
}

/*
 * How long an unanswered registration waits before it is sent again.  An agent that watches
 * its connection needs no copy: ZeroMQ delivers a registration queued before the connection is
 * up, TCP loses nothing on a live one, and a connection that drops is seen and the registration
 * queued again at once (watch_link).  A late answer means a busy master (thousands of agents
 * connecting at once, their handshakes taking longer than 3 s), and copies every 3 s only added
 * to its work: 924 copies for 2,500 agents starting at once on a loaded host.  So a watched
 * agent's copy waits for the longest retry, as a safety net; an unwatched one keeps the backoff.
 */
static int64_t register_wait(const struct agent *a)
{
    return a->watched && a->register_retry_us < REGISTER_RETRY_MAX_US ? REGISTER_RETRY_MAX_US
                                                                      : a->register_retry_us;
}

static void send_register(struct agent *a)
{
    json_t *running = json_array(), *finished = json_array();
    for (size_t i = 0; i < a->nruns; i++)
        json_array_append_new(running,
                              json_pack("{s:I, s:i, s:i, s:i, s:I, s:I}", "job",
                                        (json_int_t)a->runs[i].job, "task", a->runs[i].task,
                                        "attempt", a->runs[i].attempt, "pid", (int)a->runs[i].pid,
                                        "start_us", (json_int_t)a->runs[i].start_us, "gpu_mask",
                                        (json_int_t)a->runs[i].gpu_mask));
    for (size_t i = 0; i < a->ndone; i++) {
        json_t *e = exec_end_json(&a->done[i]);
        json_object_del(e, "v");
        json_object_del(e, "type");
        json_array_append_new(finished, e);
    }
    json_t *m = hrm_wire_new(HRM_WIRE_REGISTER);
    json_object_set_new(m, "name", json_string(a->name));
    json_object_set_new(m, "rack", json_string(a->rack));
    json_object_set_new(m, "cpu", json_integer(a->cpu_milli));
    json_object_set_new(m, "mem", json_integer(a->mem));
    json_object_set_new(m, "gpus", json_integer(a->gpus));
    json_object_set_new(m, "gpu_mem", json_integer(a->gpu_mem));
    json_object_set_new(m, "gpu_list", hw_gpu_list(a->gpu, a->gpus));
    json_object_set_new(m, "cores", json_integer(a->hw.cores));
    json_object_set_new(m, "numa", json_integer(a->hw.numa));
    json_object_set_new(m, "pci", json_integer(a->hw.pci));
    json_object_set_new(m, "host", json_string(a->host));
    json_object_set_new(m, "cgroup", json_string(a->cfg.no_cgroup || a->simulate ? "off"
                                                 : a->hw.cg == CG_V2 ? "v2"
                                                 : a->hw.cg == CG_V1 ? "v1"
                                                                     : "none"));
    if (a->perf.at > 0) /* measured performance (agent_bench.c); absent: never benched */
        json_object_set_new(m, "bench", nodeperf_to_json(&a->perf));
    anqs_list_queued(a, running); /* queued in its execution queues: the master's "running" */
    if (a->probe) /* scheduler processes probe it there, not through the master */
        json_object_set_new(m, "probe", json_string(probe_listen_endpoint(a->probe)));
    json_object_set_new(m, "task_cpu", json_true()); /* it applies the master's task_cpu */
    json_object_set_new(m, "running", running);
    json_object_set_new(m, "finished", finished);
    /* Alone in its frame: with thousands of runs it is large already. */
    agent_flush(a);
    send_now(a, m);
    json_decref(m);
    int64_t now = hrm_mono_us();
    bool retry = !a->registered && a->register_sent_us > 0 &&
                 now - a->register_sent_us < 2 * REGISTER_RETRY_MAX_US;
    if (retry)
        a->register_retry_us = a->register_retry_us * 2 > REGISTER_RETRY_MAX_US
                                   ? REGISTER_RETRY_MAX_US
                                   : a->register_retry_us * 2;
    else
        a->register_retry_us = REGISTER_RETRY_US;
    a->register_sent_us = now;
    hrm_log(HRM_LOG_DEBUG,
            "%s: registration sent; sent again in %.0f s if unanswered (retry %.0f s)", a->name,
            (double)register_wait(a) / 1e6, (double)a->register_retry_us / 1e6);
}

/*
 * A master that is reconciling after a restart asks the agents it welcomes to stay quiet for a
 * while (quiet_ms): it schedules nothing until every agent is back, and each heartbeat and
 * usage report of the agents back already delays the others' registrations.  The reports
 * resume after it, each agent at its own offset within one period (from its name, so they do
 * not all arrive at the master in the same instant when the quiet ends).
 */
void agent_quiet_after_welcome(struct agent *a, const json_t *msg)
{
    json_int_t quiet_ms = json_integer_value(json_object_get(msg, "quiet_ms"));
    if (quiet_ms <= 0)
        return;
    if (quiet_ms > WELCOME_QUIET_MAX_MS) {
        /* Ours never asks for more than 10 s; a longer silence would only get this node
         * declared down, and a huge value would overflow the clock below. */
        hrm_log(HRM_LOG_WARNING, "%s: the master asks for %lld ms without heartbeats; keeping "
                "quiet for %d ms only", a->name, (long long)quiet_ms, WELCOME_QUIET_MAX_MS);
        quiet_ms = WELCOME_QUIET_MAX_MS;
    }
    uint64_t h = hrm_hash_str(a->name);
    int64_t now = hrm_mono_us(), period = a->cfg.heartbeat_us;
    int64_t resume = now + (int64_t)quiet_ms * 1000 + (int64_t)(h % (uint64_t)period);
    if (a->next_heartbeat_us < resume)
        a->next_heartbeat_us = resume;
    if (a->next_usage_us < resume)
        a->next_usage_us = resume;
    hrm_log(HRM_LOG_DEBUG, "%s: the master reconciles: no heartbeat or usage report for %.1f s",
            a->name, (double)(resume - now) / 1e6);
}

static struct arun *find_run(struct agent *a, const json_t *msg)
{
    json_int_t job = json_integer_value(json_object_get(msg, "job"));
    json_int_t task = json_integer_value(json_object_get(msg, "task"));
    json_int_t attempt = json_integer_value(json_object_get(msg, "attempt"));
    for (size_t i = 0; i < a->nruns; i++)
        if (a->runs[i].job == job && a->runs[i].task == task && a->runs[i].attempt == attempt)
            return &a->runs[i];
    return NULL;
}

/* The master has the end: the run leaves the list a registration reports. */
static void end_acked(struct agent *a, int64_t job, int64_t task, int64_t attempt)
{
    for (size_t i = 0; i < a->ndone; i++)
        if (a->done[i].job == job && a->done[i].task == task && a->done[i].attempt == attempt) {
            a->done[i] = a->done[--a->ndone];
            break;
        }
}

/*
 * A frame of launches and acknowledgements read without a tree (src/net/wire_launch.c), or
 * false: the frame is decoded the usual way, which words any error.  Reading each launch into
 * a tree, checking and freeing it was about a seventh of the loop's time per task.  A
 * simulated agent's launches keep the tree (simexec_launch).
 */
static bool on_frame_hot(void *ctx, const char *buf, size_t len)
{
    struct agent *a = ctx;
    if (a->simulate || !hrm_wire_read_launches(buf, len, &a->hot))
        return false;
    for (size_t i = 0; i < a->hot.nmsgs; i++) {
        const struct hrm_launch_msg *m = &a->hot.msgs[i];
        if (m->type == HRM_WIRE_TASK_LAUNCH)
            exec_launch_msg(a, m, NULL);
        else
            end_acked(a, m->job, m->task, m->attempt);
    }
    return true;
}

static void on_message(struct agent *a, json_t *msg);

static void on_item(void *ctx, json_t *item)
{
    on_message(ctx, item);
}

static void on_message(struct agent *a, json_t *msg)
{
    int type = hrm_wire_type_by_name(json_string_value(json_object_get(msg, "type")));
    switch (type) {
    case HRM_WIRE_BATCH:
        peer_each_item(msg, on_item, a);
        break;
    case HRM_WIRE_WELCOME:
        if (!a->registered) /* a fleet's thousands of agents say it at info level */
            hrm_log(a->simulate ? HRM_LOG_INFO : HRM_LOG_NOTICE,
                    "%s registered with the master as node %lld", a->name,
                    (long long)json_integer_value(json_object_get(msg, "node")));
        a->registered = true;
        a->link_lost = false; /* a welcome came: the link is up */
        a->link_up = true;
        /* Answered: the backoff is for a master that does not answer, not for one that
         * restarts soon after (else every agent's first try after that restart waited 6 s
         * and more while the master, just up, had already dealt with its registration). */
        a->register_sent_us = 0;
        a->register_retry_us = REGISTER_RETRY_US;
        agent_quiet_after_welcome(a, msg);
        anqs_configure(a, msg);
        exec_launcher_follow_role(a);
        break;
    case HRM_WIRE_TASK_LAUNCH:
        exec_launch(a, msg, NULL);
        break;
    case HRM_WIRE_TASK_KILL: {
        struct arun *r = find_run(a, msg);
        if (r)
            exec_kill(a, r, SIGTERM);
        else
            anqs_cancel(a, json_integer_value(json_object_get(msg, "job")),
                        (int32_t)json_integer_value(json_object_get(msg, "task")),
                        (int32_t)json_integer_value(json_object_get(msg, "attempt")));
        break;
    }
    case HRM_WIRE_TASK_CPU:
        agent_task_cpu(a, msg);
        break;
    case HRM_WIRE_TASK_END_ACK:
        end_acked(a, json_integer_value(json_object_get(msg, "job")),
                  json_integer_value(json_object_get(msg, "task")),
                  json_integer_value(json_object_get(msg, "attempt")));
        break;
    case HRM_WIRE_LOGS_FETCH:
        agent_send(a, aout_serve(a, msg));
        break;
    case HRM_WIRE_ERROR: {
        const char *code = json_string_value(json_object_get(msg, "code"));
        if (code && strcmp(code, "not_registered") == 0) {
            /* The master restarted or declared us down: tell it everything again. */
            if (a->registered || hrm_mono_us() - a->register_sent_us > register_wait(a)) {
                a->registered = false;
                send_register(a);
            }
        } else if (code && strcmp(code, "forbidden") == 0 &&
                   (strcmp(json_string_value(json_object_get(msg, "about")) ?: "", "register") == 0 ||
                    strcmp(json_string_value(json_object_get(msg, "about")) ?: "", "key") == 0)) {
            /* The key does not match the name, or was removed from the allow-list: retrying
             * cannot help.  The tasks go on; an agent started again with a listed key
             * reconciles them. */
            hrm_errorf(&a->fatal, -EACCES, "the master refused this node: %s",
                       json_string_value(json_object_get(msg, "message")));
            a->stop = true;
        } else {
            hrm_log(HRM_LOG_WARNING, "master: %s: %s", code,
                    json_string_value(json_object_get(msg, "message")));
        }
        break;
    }
    default:
        if (type >= 0 && type < HRM_MSG_COUNT) { /* a scheduling role's message: the queues */
            anqs_on_msg(a, type, msg);
            break;
        }
        hrm_log(HRM_LOG_WARNING, "unexpected '%s' from the master",
                json_string_value(json_object_get(msg, "type")));
        break;
    }
}

/*
 * The master's connection dropped (the master stopped or restarted, or the network failed):
 * what the master knew of this node may be gone, and a new master answers every heartbeat and
 * usage report not_registered until it has the registration.  So the registration is queued at
 * once (ZeroMQ sends it first thing on the new connection) and nothing else is sent until the
 * welcome.  Before, after a master restart each agent's first messages were the heartbeats and
 * usage reports queued during the outage, each answered not_registered, and the registration
 * left only when the first answer came back: with thousands of agents, several messages and
 * answers each and a round trip through a master busy with all of them.
 */
static void watch_link(struct agent *a)
{
    int ev = hrm_conn_link_events(a->conn);
    /* Only a link that was up: a connection refused or a handshake the master refuses drops
     * too, every second, and has no registration to make up for. */
    if ((ev & HRM_LINK_LOST) && (a->link_up || a->registered)) {
        hrm_log(a->simulate ? HRM_LOG_INFO : HRM_LOG_NOTICE,
                "%s: the connection to the master dropped: its registration is queued for the "
                "new connection", a->name);
        a->registered = false;
        a->link_lost = true;
        a->register_sent_us = 0; /* a first try, not a retry: no backoff */
        send_register(a);
    }
    if (ev & HRM_LINK_LOST)
        a->link_up = false;
    if (ev & HRM_LINK_UP) {
        a->link_up = true;
        if (a->link_lost) {
            a->link_lost = false;
            a->register_sent_us = hrm_mono_us(); /* it leaves now: its answer is due from here */
        }
        if (!a->registered)
            hrm_log(HRM_LOG_DEBUG, "%s: connected to the master; its registration is sent again "
                    "in %.0f s if unanswered", a->name, (double)register_wait(a) / 1e6);
    }
}

static void timers(struct agent *a)
{
    int64_t now = hrm_mono_us();
    if (!a->simulate) {
        exec_deadlines(a);
        aout_tick(a);
        cg_retry(a);
    }
    if (!a->registered && !a->link_lost && now - a->register_sent_us >= register_wait(a))
        send_register(a);
    /* Not before the welcome: a heartbeat the master gets before the registration is answered
     * not_registered, and that answer, arriving after the welcome, would start it all over
     * (with thousands of agents registering at once, a storm of registrations). */
    if (now >= a->next_heartbeat_us && !a->registered) {
        a->next_heartbeat_us = now + a->cfg.heartbeat_us;
    } else if (now >= a->next_heartbeat_us) {
        json_t *h = hrm_wire_new(HRM_WIRE_HEARTBEAT);
        double load;
        int64_t mem_avail;
        if (a->simulate) {
            simexec_heartbeat(a, &load, &mem_avail);
        } else {
            load = hw_loadavg();
            mem_avail = hw_mem_avail();
        }
        json_object_set_new(h, "load", json_real(load));
        json_object_set_new(h, "mem_avail", json_integer(mem_avail));
        json_object_set_new(h, "ntasks", json_integer((json_int_t)a->nruns));
        anqs_heartbeat(a, h);
        agent_send(a, h);
        a->next_heartbeat_us = now + a->cfg.heartbeat_us;
    }
    if (now >= a->next_usage_us) {
        /* Idle or not: the node's own load is part of every sample. */
        if (a->registered)
            agent_send(a, a->simulate ? simexec_usage(a) : usage_message(a));
        a->next_usage_us = now + a->cfg.usage_us;
    }
}

/*
 * Tasks run as other users on this host, so the keys the agent reads must not be readable by
 * them: the folder 0700, private keys 0600.  The agent tightens what it owns and says so;
 * what it does not own it can only report.
 */
static void keys_guard(const struct agent *a)
{
    struct stat st;
    if (stat(a->keys_dir, &st) == 0 && (st.st_mode & 077)) {
        if (st.st_uid == geteuid() && chmod(a->keys_dir, 0700) == 0)
            hrm_log(HRM_LOG_NOTICE, "keys folder %s was mode %03o; made it 0700 so tasks cannot "
                    "read it", a->keys_dir, (unsigned)(st.st_mode & 0777));
        else
            hrm_log(HRM_LOG_WARNING, "keys folder %s is mode %03o: tasks may read its keys",
                    a->keys_dir, (unsigned)(st.st_mode & 0777));
    }
    DIR *d = opendir(a->keys_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        char path[1400];
        if (n < 4 || strcmp(e->d_name + n - 4, ".key") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", a->keys_dir, e->d_name);
        if (stat(path, &st) < 0 || !(st.st_mode & 077))
            continue;
        if (st.st_uid == geteuid() && chmod(path, 0600) == 0)
            hrm_log(HRM_LOG_NOTICE, "%s was mode %03o; made it 0600", path,
                    (unsigned)(st.st_mode & 0777));
        else
            hrm_log(HRM_LOG_WARNING, "%s is mode %03o: tasks may read it", path,
                    (unsigned)(st.st_mode & 0777));
    }
    if (d)
        closedir(d);
}

void agent_free(struct agent *a)
{
    if (!a)
        return;
    if (!a->simulate) {
        speed_fini(a);
        cg_fini(a);
    }
    if (a->sigfd >= 0)
        close(a->sigfd);
    exec_fini(a);
    anqs_free(a);
    probe_listen_free(a->probe);
    drop_queued(a);
    hrm_free(a->outq);
    hrm_conn_free(a->conn);
    if (a->owns_zctx)
        hrm_zctx_free(a->zctx);
    hrm_free(a->runs);
    hrm_free(a->done);
    hrm_free(a);
}

/* What every agent sets first, real or simulated: defaults, names and folders. */
static struct agent *agent_alloc(const struct hrm_agent_config *cfg, const char *name)
{
    struct agent *a = hrm_calloc(1, sizeof(*a));
    a->sigfd = -1;
    a->devnull = -1;
    a->flush_gen = 1; /* 0 is "no task_started queued" (struct arun starts zeroed) */
    a->cfg = *cfg;
    if (a->cfg.heartbeat_us <= 0)
        a->cfg.heartbeat_us = 1000000;
    if (a->cfg.usage_us <= 0)
        a->cfg.usage_us = 1000000;
    /* 0: the default; negative: no limit (docs/runtime.md, "Task output") */
    if (a->cfg.max_output == 0)
        a->cfg.max_output = HRM_AGENT_MAX_OUTPUT_DEFAULT;
    if (a->cfg.output_retention_us == 0)
        a->cfg.output_retention_us = HRM_AGENT_RETENTION_DEFAULT_US;
    if (a->cfg.task_pids == 0)
        a->cfg.task_pids = HRM_TASK_PIDS_DEFAULT;
    gethostname(a->host, sizeof(a->host) - 1);
    snprintf(a->name, sizeof(a->name), "%.47s", name ? name : a->host);
    snprintf(a->rack, sizeof(a->rack), "%s", cfg->rack ? cfg->rack : "r0");
    snprintf(a->state_dir, sizeof(a->state_dir), "%s", cfg->state_dir ? cfg->state_dir : ".");
    if (cfg->keys_dir)
        snprintf(a->keys_dir, sizeof(a->keys_dir), "%s", cfg->keys_dir);
    else
        snprintf(a->keys_dir, sizeof(a->keys_dir), "%s/keys", a->state_dir);
    if (cfg->work_dir)
        snprintf(a->work_dir, sizeof(a->work_dir), "%s", cfg->work_dir);
    else
        snprintf(a->work_dir, sizeof(a->work_dir), "%.1000s/agents/%s", a->state_dir, a->name);
    return a;
}

/* This agent's own key (hrm keygen --node NAME), else the shared one, and the master's. */
static int agent_keys(struct agent *a, struct hrm_keypair *mine, struct hrm_keypair *master,
                      struct hrm_error *err)
{
    char key[HRM_KEY_NAME_MAX + 16], path[1300];
    snprintf(key, sizeof(key), "agent-%s", a->name);
    snprintf(path, sizeof(path), "%s/%s.key", a->keys_dir, key);
    if (!hrm_keys_valid_name(a->name) || access(path, F_OK) != 0)
        snprintf(key, sizeof(key), "agent");
    if (hrm_keys_load(a->keys_dir, key, false, mine, err) < 0 ||
        hrm_keys_load(a->keys_dir, "master", true, master, err) < 0)
        return -1;
    return 0;
}

struct agent *agent_new_simulated(const struct hrm_agent_config *cfg, const char *name,
                                  void *zctx, bool watch_link, struct hrm_error *err)
{
    struct agent *a = agent_alloc(cfg, name);
    a->simulate = true;
    /* Each simulated node is a host of its own: the master shares no foreign load among them. */
    snprintf(a->host, sizeof(a->host), "%s", a->name);
    a->cpu_milli = cfg->cpus_milli > 0 ? cfg->cpus_milli : 4000;
    a->cpu_milli -= a->cpu_milli % 1000;
    a->mem = cfg->mem > 0 ? cfg->mem : (int64_t)8 << 30;
    a->gpus = cfg->gpus > 0 ? cfg->gpus : 0;
    a->gpu_mem = cfg->gpu_mem > 0 ? cfg->gpu_mem : (int64_t)16 << 30;
    a->hw.cores = a->hw.pus = (int32_t)(a->cpu_milli / 1000);
    a->hw.numa = 1;
    a->hw.nvml_gpus = -1;
    if (cfg->master)
        snprintf(a->endpoint, sizeof(a->endpoint), "%s", cfg->master);
    else if (peer_read_endpoint(a->state_dir, a->endpoint, sizeof(a->endpoint), err) < 0)
        goto fail;
    struct hrm_keypair mine, master;
    if (agent_keys(a, &mine, &master, err) < 0)
        goto fail;
    a->zctx = zctx;
    int watch_rc;
    if (!(a->conn = hrm_conn_new_watching(a->zctx, a->endpoint, master.pub, &mine,
                                          watch_link ? HRM_CONN_WATCH_LINK : HRM_CONN_WATCH_NONE,
                                          &watch_rc, err)))
        goto fail;
    if (watch_link && watch_rc < 0) /* the reconnection's registration (watch_link) */
        hrm_log(HRM_LOG_WARNING, "%s: cannot watch the master's connection: after a master "
                "restart it registers when told not_registered", a->name);
    else
        a->watched = watch_link;
    return a;
fail:
    agent_free(a);
    return NULL;
}

static struct agent *agent_new(const struct hrm_agent_config *cfg, struct hrm_error *err)
{
    struct agent *a = agent_alloc(cfg, cfg->name);
    a->owns_zctx = true;
    hw_discover(&a->hw, a->name, false);
    a->cpu_milli = cfg->cpus_milli > 0 ? cfg->cpus_milli : (int64_t)a->hw.pus * 1000;
    a->cpu_milli -= a->cpu_milli % 1000; /* the model counts whole cores */
    if (a->cpu_milli < 1000)
        a->cpu_milli = 1000;
    a->mem = cfg->mem > 0 ? cfg->mem : a->hw.mem_total;
    a->gpus = cfg->gpus >= 0 ? cfg->gpus : (a->hw.nvml_gpus > 0 ? a->hw.nvml_gpus : 0);
    a->gpu_mem = cfg->gpu_mem > 0                          ? cfg->gpu_mem
                 : cfg->gpus < 0 && a->hw.nvml_gpu_mem > 0 ? a->hw.nvml_gpu_mem
                                                           : (int64_t)16 << 30;
    bind_init(a);
    if (!cfg->master && peer_read_endpoint(a->state_dir, a->endpoint, sizeof(a->endpoint), err) < 0)
        goto fail;
    if (exec_init(a, err) < 0)
        goto fail;
    if (cfg->master)
        snprintf(a->endpoint, sizeof(a->endpoint), "%s", cfg->master);
    struct stat st;
    if (stat(a->state_dir, &st) == 0 && statedir_make_private(a->state_dir, NULL, err) < 0)
        goto fail;
    struct hrm_keypair mine, master;
    if (agent_keys(a, &mine, &master, err) < 0)
        goto fail;
    keys_guard(a);
    /* Task cgroups carry the cluster's identity: two clusters on one host, each with a node1,
     * never share (or sweep) each other's. */
    cg_cluster_id(master.pub, a->cluster);
    speed_apply(a); /* before the bench, which must measure the node as its tasks find it */
    /* The bench forks a process that starts threads: it must run while the agent has one
     * thread, before ZeroMQ starts its own (a fork may copy a lock one of them holds). */
    bench_at_start(a);
    if (!(a->zctx = hrm_zctx_new())) {
        hrm_errorf(err, -ENOMEM, "cannot create a ZeroMQ context");
        goto fail;
    }
    int watch_rc;
    if (!(a->conn = hrm_conn_new_watching(a->zctx, a->endpoint, master.pub, &mine,
                                          HRM_CONN_WATCH_LINK, &watch_rc, err)))
        goto fail;
    exec_launcher_start(a); /* a thread: after the bench's fork, as ZeroMQ's */
    if (anqs_probes_open(a, &mine, err) < 0)
        goto fail;
    if (watch_rc < 0) /* the reconnection's registration (watch_link) */
        hrm_log(HRM_LOG_WARNING, "cannot watch the master's connection: after a master restart "
                "this agent registers when told not_registered");
    else
        a->watched = true;
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGCHLD);
    if ((a->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        hrm_errorf(err, -errno, "signalfd: %s", strerror(errno));
        goto fail;
    }
    return a;
fail:
    agent_free(a);
    return NULL;
}

void agent_start(struct agent *a)
{
    send_register(a);
    a->next_heartbeat_us = hrm_mono_us() + a->cfg.heartbeat_us;
    a->next_usage_us = hrm_mono_us() + a->cfg.usage_us;
}

int64_t agent_next_due(const struct agent *a)
{
    int64_t t = a->next_heartbeat_us < a->next_usage_us ? a->next_heartbeat_us : a->next_usage_us;
    if (!a->registered && a->register_sent_us + register_wait(a) < t)
        t = a->register_sent_us + register_wait(a);
    int64_t q = anqs_next_timer(a);
    if (q < t)
        t = q;
    if (a->simulate && (q = simexec_next_end(a)) < t)
        t = q;
    return t;
}

void agent_turn(struct agent *a)
{
    a->counts.turns++;
    /* Before the messages: ZeroMQ reports a drop before anything arrives on the new connection,
     * so a not_registered answer to a message queued before the drop finds the registration
     * already queued, and does not queue a second one. */
    watch_link(a);
    /* The ends reaped since the last turn (on SIGCHLD, before this turn) leave now and free
     * their slots in the execution queues, ahead of the launches of the master's messages. */
    anqs_drain(a);
    for (int i = 0; i < TURN_MAX_MSGS; i++) {
        /* Probes first, and between the master's messages: a run may start a task, whose
         * start the loop prepares (files, environment, cgroups) before the launcher thread
         * clones it, and a scheduler's round waits for its slowest node's reply.  A look at a
         * socket with nothing in it costs system calls: none when no scheduler can send. */
        anqs_probes_take_between(a);
        json_t *msg;
        struct hrm_error rerr;
        int rc = hrm_conn_recv_hot(a->conn, 0, on_frame_hot, a, &msg, &rerr);
        if (rc == -ETIMEDOUT)
            break;
        if (rc < 0) {
            hrm_log(HRM_LOG_WARNING, "%s", rerr.text);
            continue;
        }
        if (!msg)
            continue; /* read without a tree, and done (on_frame_hot) */
        on_message(a, msg);
        json_decref(msg);
    }
    /* The launches that are back, with no system call when none is.  No wait4 here: every
     * child's exit raises a SIGCHLD after the last wait4 of the reap it missed (the signal is
     * read before that reap), so the signalfd wakes the loop for it. */
    if (a->simulate)
        exec_reap(a);
    else
        exec_collect(a);
    anqs_probes_take(a);
    anqs_drain(a);
    anqs_run_timers(a);
    timers(a);
    if (hrm_mono_us() >= agent_flush_due(a))
        agent_flush(a);
}

/*
 * zmq_poll for the master's socket and two descriptors, with one look at ZeroMQ's mailbox
 * where zmq_poll takes two (it polls once without waiting, looks, then polls and looks again):
 * each look is a getpid and a poll(2) of the mailbox's eventfd.  ZeroMQ's descriptor (ZMQ_FD)
 * only says that its mailbox has commands; ZMQ_EVENTS reads them and says whether a message
 * waits.  Every send and receive may read the mailbox too, so the look comes right before the
 * wait, and a wake-up by ZMQ_FD alone whose look finds no message waits again, without a turn.
 * Same contract as zmq_poll on items[0..2] (ZMQ_POLLIN only): how many are ready, or -1.
 */
static int loop_poll(struct agent *a, zmq_pollitem_t items[3], long timeout_ms)
{
    void *sock = items[0].socket;
    int zfd;
    size_t len = sizeof(zfd);
    if (zmq_getsockopt(sock, ZMQ_FD, &zfd, &len) < 0)
        return zmq_poll(items, 3, timeout_ms);
    int64_t deadline = hrm_mono_us() + (int64_t)timeout_ms * 1000;
    for (;;) {
        uint32_t ev = 0;
        len = sizeof(ev);
        if (zmq_getsockopt(sock, ZMQ_EVENTS, &ev, &len) < 0)
            return -1;
        struct pollfd p[3] = {{zfd, POLLIN, 0}, {(int)items[1].fd, POLLIN, 0},
                              {(int)items[2].fd, POLLIN, 0}};
        long wait_ms = ev & ZMQ_POLLIN ? 0 : timeout_ms;
        int n = poll(p, 3, (int)wait_ms);
        if (n < 0)
            return -1; /* errno: EINTR as zmq_poll's */
        items[0].revents = (short)(ev & ZMQ_POLLIN);
        items[1].revents = (short)(p[1].revents & POLLIN ? ZMQ_POLLIN : 0);
        items[2].revents = (short)(p[2].revents & POLLIN ? ZMQ_POLLIN : 0);
        if (!items[0].revents && (p[0].revents & POLLIN)) {
            len = sizeof(ev); /* commands came: is there a message among them? */
            if (zmq_getsockopt(sock, ZMQ_EVENTS, &ev, &len) < 0)
                return -1;
            items[0].revents = (short)(ev & ZMQ_POLLIN);
        }
        int ready = (items[0].revents != 0) + (items[1].revents != 0) + (items[2].revents != 0);
        if (ready > 0 || !(p[0].revents & POLLIN))
            return ready;
        int64_t left = deadline - hrm_mono_us(); /* ZeroMQ's commands alone: wait on */
        if (left <= 0)
            return 0;
        timeout_ms = (long)((left + 999) / 1000);
    }
}

/* Every record the signalfd holds, in one read (SIGCHLDs are merged by the kernel: at most one
 * of each signal waits), then again only when the buffer came back full. */
static bool read_signals(struct agent *a)
{
    struct signalfd_siginfo si[4];
    ssize_t n;
    bool any = false;
    do {
        n = read(a->sigfd, si, sizeof(si));
        for (ssize_t k = 0; k < n / (ssize_t)sizeof(si[0]); k++)
            if (si[k].ssi_signo == SIGINT || si[k].ssi_signo == SIGTERM) {
                hrm_log(HRM_LOG_NOTICE, "signal %u: stopping tasks and exiting", si[k].ssi_signo);
                a->stop = true;
            }
        any |= n > 0;
    } while (n == (ssize_t)sizeof(si));
    return any;
}

/*
 * The gap after a reap: while tasks run, the signalfd is left out of the loop's poll for the
 * reap's gap (--reap-gap, 2 ms by default), and the children that end meanwhile are reaped
 * together in a turn made anyway (the master's launches, mostly, which answer the frame of
 * ends the reap sent) or in the turn once it is over, their ends in one frame.  With a
 * launcher that starts one child at a time (CLONE_VFORK), short tasks end one at a time too:
 * a SIGCHLD each, and each a wake-up of the loop, a frame to the master and a turn of the
 * master's.  Like a network card's interrupt coalescing, the gap only follows a reap, so a
 * lone end is reaped at once; an end waits the gap at most, no longer than a start's report
 * may wait (START_FRAME_WAIT_US).  A SIGTERM to the agent waits as long.  Not on a node queue
 * system's node: an end there starts the queue's next task at once, on the node itself, and
 * P4's testbed was not measured with a gap.
 */
static void reap_gap_after(struct agent *a)
{
    int64_t gap = a->cfg.reap_gap_us ? a->cfg.reap_gap_us : HRM_AGENT_REAP_GAP_DEFAULT_US;
    a->reap_gap_until_us = a->nruns > 0 && !a->nqs && gap > 0 ? hrm_mono_us() + gap : 0;
}

int hrm_agent_run(const struct hrm_agent_config *cfg, struct hrm_error *err)
{
    hrm_alloc_daemon();
    if (cfg->simulate_exec)
        return agent_fleet_run(cfg, err);
    struct agent *a = agent_new(cfg, err);
    if (!a)
        return -HRM_EIO;
    hrm_log(HRM_LOG_NOTICE,
            "agent %s (rack %s): %lld cpus, %lld MiB, %d GPUs; cgroup %s (cluster %s); master %s; "
            "output in %s",
            a->name, a->rack, (long long)(a->cpu_milli / 1000), (long long)(a->mem >> 20), a->gpus,
            a->cfg.no_cgroup ? "off" : a->hw.cg_why, a->cluster, a->endpoint, a->work_dir);
    cg_sweep(a); /* before any task of ours can be there */
    agent_start(a);
    while (!a->stop) {
        void *probe[2];
        size_t nprobe = anqs_probes_socks(a, probe);
        int64_t now = hrm_mono_us(), wait_us = a->next_heartbeat_us - now;
        /* In a reap's gap the signalfd is not watched: the children that end meanwhile are
         * reaped together once it is over (reap_gap_after). */
        bool in_gap = now < a->reap_gap_until_us;
        /* The launcher's fd (-1, never ready, without one): a task it started has had its
         * pid for a while and no turn has taken it (agent_exec_thread.c, the hold). */
        zmq_pollitem_t items[5] = {
            {hrm_conn_zsock(a->conn), 0, ZMQ_POLLIN, 0},
            {NULL, in_gap ? -1 : a->sigfd, ZMQ_POLLIN, 0},
            {NULL, exec_launcher_fd(a), ZMQ_POLLIN, 0},
            {nprobe > 0 ? probe[0] : NULL, -1, ZMQ_POLLIN, 0},
            {nprobe > 1 ? probe[1] : NULL, -1, ZMQ_POLLIN, 0},
        };
        if (a->next_usage_us - now < wait_us)
            wait_us = a->next_usage_us - now; /* a period under the loop's 100 ms */
        if (wait_us > 100000)
            wait_us = 100000; /* kill deadlines and registration retries */
        int64_t qt = anqs_next_timer(a); /* hold expiry in the execution queues */
        if (qt != INT64_MAX && qt - now < wait_us)
            wait_us = qt - now;
        int64_t ft = agent_flush_due(a); /* task_starteds waiting for a frame */
        if (ft != INT64_MAX && ft - now < wait_us)
            wait_us = ft - now;
        bool gap_bounds = in_gap && a->reap_gap_until_us - now <= wait_us;
        if (gap_bounds)
            wait_us = a->reap_gap_until_us - now;
        long timeout_ms = wait_us > 0 ? (long)((wait_us + 999) / 1000) : 0;
        int n = nprobe > 0 ? zmq_poll(items, 3 + (int)nprobe, timeout_ms)
                           : loop_poll(a, items, timeout_ms);
        if (n < 0 && zmq_errno() != EINTR)
            break;
        if (n == 0 && gap_bounds)
            continue; /* the gap is over: look at the signalfd, no turn for the timeout */
        /* In the gap a turn made for another reason (the master's launches, mostly, which
         * answer the frame of ends the last reap sent) looks at the signalfd too: a read that
         * finds nothing costs less than a wake-up of its own. */
        if ((items[1].revents & ZMQ_POLLIN) || (in_gap && read_signals(a))) {
            if (!in_gap)
                read_signals(a);
            a->counts.reap_turns++;
            exec_reap(a);
            reap_gap_after(a);
        } else if (items[2].revents & ZMQ_POLLIN) {
            exec_collect(a); /* the launches that are back first */
        }
        agent_turn(a);
    }
    hrm_log(HRM_LOG_NOTICE,
            "agent loop: %llu turns, %llu reaping %llu children, %llu frames sent, %llu launches "
            "back in %llu takes",
            (unsigned long long)a->counts.turns, (unsigned long long)a->counts.reap_turns,
            (unsigned long long)a->counts.reaped, (unsigned long long)a->counts.frames,
            (unsigned long long)a->counts.launches_back, (unsigned long long)a->counts.collects);
    exec_stop_all(a);
    agent_flush(a);
    int rc = a->fatal.text[0] ? hrm_errorf(err, -EACCES, "%s", a->fatal.text) : 0;
    agent_free(a);
    return rc;
}
