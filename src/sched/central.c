/* Central scheduler role: applies messages to the state, runs batched policy passes, emits launches and kills. */
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/central.h"

#define COOKIE_PASS 1

struct hrm_central {
    struct hrm_state *state;
    struct hrm_policy *policy;
    struct hrm_central_config cfg;
    bool pass_armed;
    bool *job_reported; /* JOB_END sent */
    size_t cap_job_reported;
    struct hrm_sched_ctx ctx;
    struct hrm_central_stats stats;
};

struct hrm_central *hrm_central_new(const struct hrm_cluster *cluster,
                                    const struct hrm_workload *wl, struct hrm_policy *policy,
                                    const struct hrm_central_config *cfg)
{
    struct hrm_central *c = hrm_calloc(1, sizeof(*c));
    c->state = hrm_state_new(cluster, wl);
    c->policy = policy;
    if (cfg)
        c->cfg = *cfg;
    if (c->cfg.max_attempts > 0)
        c->state->max_attempts = c->cfg.max_attempts;
    c->cap_job_reported = (size_t)(wl->njobs > 0 ? wl->njobs : 1);
    c->job_reported = hrm_calloc(c->cap_job_reported, sizeof(*c->job_reported));
    c->ctx.state = c->state;
    return c;
}

void hrm_central_free(struct hrm_central *c)
{
    if (!c)
        return;
    hrm_policy_free(c->policy);
    hrm_state_free(c->state);
    hrm_free(c->job_reported);
    hrm_free(c->ctx.decisions);
    hrm_free(c);
}

bool hrm_central_can_grow(const struct hrm_central *c)
{
    return c->policy->ops->grows;
}

int hrm_central_grow(struct hrm_central *c)
{
    if (!c->policy->ops->grows)
        return -ENOTSUP;
    int32_t had = c->state->njobs;
    hrm_state_grow(c->state);
    int32_t now = c->state->njobs;
    if (now > had) {
        HRM_GROW(c->job_reported, c->cap_job_reported, (size_t)now);
        memset(c->job_reported + had, 0, (size_t)(now - had) * sizeof(*c->job_reported));
    }
    if (c->policy->ops->on_grow)
        c->policy->ops->on_grow(c->policy, c->state);
    return 0;
}

const struct hrm_state *hrm_central_state(const struct hrm_central *c)
{
    return c->state;
}

const struct hrm_central_stats *hrm_central_stats(const struct hrm_central *c)
{
    return &c->stats;
}

static void notify(struct hrm_central *c, enum hrm_event_type type, int64_t now, int32_t job,
                   int32_t task, int32_t node, enum hrm_task_outcome outcome)
{
    if (!c->policy->ops->on_event)
        return;
    struct hrm_event ev = {
        .type = type, .now_us = now, .job = job, .task = task, .node = node, .outcome = outcome};
    c->policy->ops->on_event(c->policy, c->state, &ev);
}

/* One pass per batch of messages: the pass runs once the messages already due
 * at this instant are in, which keeps a burst of arrivals one decision round. */
static void arm_pass_after(struct hrm_central *c, struct hrm_env *env, int64_t delay_us)
{
    if (c->pass_armed)
        return;
    c->pass_armed = true;
    env->timer(env, env->now_us(env) + delay_us, COOKIE_PASS);
}

static void arm_pass(struct hrm_central *c, struct hrm_env *env)
{
    arm_pass_after(c, env, c->cfg.pass_delay_us);
}

static void report_job_if_ended(struct hrm_central *c, struct hrm_env *env, int32_t job)
{
    const struct hrm_job_state *js = &c->state->jobs[job];
    if (!js->finished || c->job_reported[job])
        return;
    c->job_reported[job] = true;
    int64_t now = env->now_us(env);
    notify(c, HRM_EV_JOB_END, now, job, -1, -1, HRM_OUTCOME_DONE);
    struct hrm_msg m = {.type = HRM_MSG_JOB_END,
                        .status = js->failed ? 1 : 0,
                        .from = HRM_ADDR_CENTRAL,
                        .job = job,
                        .task = -1,
                        .node = -1,
                        .value = js->end_us};
    env->send(env, HRM_ADDR_CLIENT, &m);
}

static int on_task_end(struct hrm_central *c, struct hrm_env *env, const struct hrm_msg *msg)
{
    struct hrm_state *s = c->state;
    if (msg->task < 0 || msg->task >= s->wl->ntasks)
        return -EINVAL;
    const struct hrm_task_state *ts = &s->tasks[msg->task];
    /* A report about a run we no longer consider live (preempted, or its node
     * was declared down) is stale: that run's resources were already released. */
    if (ts->status != HRM_TASK_RUNNING || ts->attempt != msg->attempt || ts->node != msg->node)
        return 0;
    enum hrm_task_outcome outcome = msg->status;
    if (outcome != HRM_OUTCOME_DONE && outcome != HRM_OUTCOME_FAILED)
        outcome = HRM_OUTCOME_FAILED;
    int64_t now = env->now_us(env);
    int32_t job = s->wl->tasks[msg->task].job;
    int rc = hrm_state_stop(s, msg->task, outcome, now);
    if (rc < 0)
        return rc;
    notify(c, HRM_EV_TASK_STOP, now, job, msg->task, msg->node, outcome);
    report_job_if_ended(c, env, job);
    arm_pass(c, env);
    return 0;
}

static int on_node_down(struct hrm_central *c, struct hrm_env *env, int32_t node)
{
    struct hrm_state *s = c->state;
    int64_t now = env->now_us(env);
    /* Remember whose tasks are lost: a failed job may end when they go. */
    int32_t njobs = 0, cap = s->nodes[node].nrunning;
    int32_t *jobs = hrm_alloc((size_t)(cap ? cap : 1) * sizeof(*jobs));
    for (int32_t t = s->nodes[node].run_head; t >= 0; t = s->tasks[t].next)
        jobs[njobs++] = s->wl->tasks[t].job;
    hrm_state_node_down(s, node, now);
    notify(c, HRM_EV_NODE_DOWN, now, -1, -1, node, HRM_OUTCOME_LOST);
    for (int32_t i = 0; i < njobs; i++)
        report_job_if_ended(c, env, jobs[i]);
    hrm_free(jobs);
    arm_pass(c, env);
    return 0;
}

/*
 * Usage samples (P2) go to the policy, which learns from them; they do
 * not change the state.  A task sample about a run no longer live is stale
 * and dropped, like a stale TASK_END.  A node report arms a pass: a node
 * whose foreign load went away may now take work a policy refused before.
 */
static int on_usage(struct hrm_central *c, struct hrm_env *env, const struct hrm_msg *msg)
{
    struct hrm_state *s = c->state;
    if (msg->node < 0 || msg->node >= s->cluster->nnodes)
        return -EINVAL;
    struct hrm_event ev = {.now_us = env->now_us(env), .job = -1, .task = -1, .node = msg->node};
    hrm_usage_unpack(msg, &ev.usage);
    if (msg->type == HRM_MSG_TASK_USAGE) {
        if (msg->task < 0 || msg->task >= s->wl->ntasks)
            return -EINVAL;
        const struct hrm_task_state *ts = &s->tasks[msg->task];
        if (ts->status != HRM_TASK_RUNNING || ts->attempt != msg->attempt || ts->node != msg->node)
            return 0;
        ev.type = HRM_EV_TASK_USAGE;
        ev.task = msg->task;
        ev.job = s->wl->tasks[msg->task].job;
        ev.attempt = msg->attempt;
    } else {
        ev.type = HRM_EV_NODE_USAGE;
    }
    if (c->policy->ops->on_event)
        c->policy->ops->on_event(c->policy, s, &ev);
    if (msg->type == HRM_MSG_NODE_USAGE)
        arm_pass(c, env);
    return 0;
}

int hrm_central_on_msg(struct hrm_central *c, struct hrm_env *env, const struct hrm_msg *msg)
{
    struct hrm_state *s = c->state;
    int64_t now = env->now_us(env);
    switch (msg->type) {
    case HRM_MSG_JOB_SUBMIT: {
        int rc = hrm_state_submit_job(s, msg->job, now);
        if (rc < 0)
            return rc;
        notify(c, HRM_EV_JOB_SUBMIT, now, msg->job, -1, -1, HRM_OUTCOME_DONE);
        arm_pass(c, env);
        return 0;
    }
    case HRM_MSG_TASK_END:
        return on_task_end(c, env, msg);
    case HRM_MSG_NODE_DOWN:
        if (msg->node < 0 || msg->node >= s->cluster->nnodes)
            return -EINVAL;
        return on_node_down(c, env, msg->node);
    case HRM_MSG_TASK_USAGE:
    case HRM_MSG_NODE_USAGE:
        return on_usage(c, env, msg);
    case HRM_MSG_NODE_UP:
        if (msg->node < 0 || msg->node >= s->cluster->nnodes)
            return -EINVAL;
        hrm_state_node_up(s, msg->node);
        notify(c, HRM_EV_NODE_UP, now, -1, -1, msg->node, HRM_OUTCOME_DONE);
        arm_pass(c, env);
        return 0;
    default:
        return -EPROTO;
    }
}

static int run_pass(struct hrm_central *c, struct hrm_env *env)
{
    int64_t now = env->now_us(env);
    c->ctx.now_us = now;
    c->ctx.ndecisions = 0;
    c->ctx.nstarts = 0;
    c->ctx.max_starts = c->cfg.max_starts_per_pass > 0 ? (size_t)c->cfg.max_starts_per_pass : 0;
    c->stats.passes++;
    int rc = c->policy->ops->decide(c->policy, &c->ctx);
    bool bounded = rc == -HRM_EPASS_FULL;
    if (rc < 0 && !bounded)
        return rc;
    for (size_t i = 0; i < c->ctx.ndecisions; i++) {
        const struct hrm_decision *d = &c->ctx.decisions[i];
        const struct hrm_task *t = &c->state->wl->tasks[d->task];
        struct hrm_msg m = {.from = HRM_ADDR_CENTRAL,
                            .job = t->job,
                            .task = d->task,
                            .node = d->node,
                            .attempt = d->attempt,
                            .gpu_mask = d->gpu_mask};
        if (d->kind == HRM_DECIDE_START) {
            m.type = HRM_MSG_TASK_LAUNCH;
            c->stats.decisions++;
            notify(c, HRM_EV_TASK_START, now, t->job, d->task, d->node, HRM_OUTCOME_DONE);
        } else {
            m.type = HRM_MSG_TASK_KILL;
            c->stats.preemptions++;
            notify(c, HRM_EV_TASK_STOP, now, t->job, d->task, d->node, HRM_OUTCOME_PREEMPTED);
        }
        env->send(env, hrm_addr_node(d->node), &m);
    }
    if (bounded) {
        /* The rest is the next pass's, at once: the policy orders it from the state then,
         * as it would have in this pass. */
        c->stats.bounded_passes++;
        arm_pass_after(c, env, 0);
    }
    return 0;
}

int hrm_central_on_timer(struct hrm_central *c, struct hrm_env *env, uint64_t cookie)
{
    if (cookie != COOKIE_PASS)
        return -EINVAL;
    c->pass_armed = false;
    return run_pass(c, env);
}
