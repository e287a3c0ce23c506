/* The agent's task_started report: left out of the flush that also carries the run's end (the
 * master learns the start from the end), kept when the end comes in a later flush, and never
 * withdrawing another message in its place. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent_private.h"
#include "hrm/alloc.h"

static struct agent *bare_agent(void)
{
    struct agent *a = hrm_calloc(1, sizeof(*a));
    a->simulate = true; /* no output files to bound */
    a->flush_gen = 3;
    return a;
}

static void clear_queue(struct agent *a)
{
    for (size_t i = 0; i < a->noutq; i++) {
        json_decref((json_t *)a->outq[i].msg);
        free((char *)a->outq[i].text);
    }
    a->noutq = 0;
}

static void agent_done(struct agent *a)
{
    clear_queue(a);
    hrm_free(a->outq);
    hrm_free(a->runs);
    hrm_free(a->done);
    hrm_free(a);
}

/* The queued message i as a tree (a new reference; NULL: withdrawn), tree or text. */
static json_t *item_at(const struct agent *a, size_t i)
{
    const struct hrm_wire_item *it = &a->outq[i];
    if (it->msg)
        return json_incref((json_t *)it->msg);
    return it->text ? json_loadb(it->text, it->len, 0, NULL) : NULL;
}

static char type_buf[64];
static const char *type_at(const struct agent *a, size_t i)
{
    json_t *m = item_at(a, i);
    snprintf(type_buf, sizeof(type_buf), "%s",
             m ? json_string_value(json_object_get(m, "type")) : "null");
    json_decref(m);
    return type_buf;
}

static json_int_t int_at(const struct agent *a, size_t i, const char *key)
{
    json_t *m = item_at(a, i);
    json_int_t v = json_integer_value(json_object_get(m, key));
    json_decref(m);
    return v;
}

/* The run leaves a->runs and ends, as exec_reap does. */
static void end_run(struct agent *a, size_t i)
{
    struct arun done = a->runs[i];
    a->runs[i] = a->runs[--a->nruns];
    exec_finish(a, &done);
}

Test(onehost2_agent, a_start_and_its_end_in_one_flush_send_the_end_only)
{
    struct agent *a = bare_agent();
    struct arun r = {.job = 7, .task = 2, .attempt = 1, .pid = 4242, .start_us = 100};
    struct arun *run = exec_run_add(a, &r);
    cr_assert_eq(a->nruns, 1);
    cr_assert_eq(run->job, 7);
    cr_assert_eq(a->noutq, 1);
    cr_assert_str_eq(type_at(a, 0), "task_started");
    end_run(a, 0);
    cr_assert_eq(a->noutq, 2);
    cr_assert_str_eq(type_at(a, 0), "null", "the start was not withdrawn");
    cr_assert_str_eq(type_at(a, 1), "task_end");
    cr_assert_eq(int_at(a, 1, "start_us"), 100, "the end carries the start");
    agent_done(a);
}

Test(onehost2_agent, an_end_in_a_later_flush_withdraws_nothing)
{
    struct agent *a = bare_agent();
    struct arun r = {.job = 8, .task = 0, .attempt = 1, .pid = 4243};
    exec_run_add(a, &r);
    clear_queue(a); /* the flush sent the start */
    a->flush_gen++;
    agent_send(a, json_pack("{s:s}", "type", "heartbeat"));
    end_run(a, 0);
    cr_assert_eq(a->noutq, 2);
    cr_assert_str_eq(type_at(a, 0), "heartbeat", "another message was withdrawn");
    cr_assert_str_eq(type_at(a, 1), "task_end");
    agent_done(a);
}

Test(onehost2_agent, runs_started_together_each_withdraw_their_own_start)
{
    struct agent *a = bare_agent();
    for (int32_t t = 0; t < 3; t++) {
        struct arun r = {.job = 9, .task = t, .attempt = 1, .pid = 5000 + t};
        exec_run_add(a, &r);
    }
    /* Task 1 ends in the same flush: only its start goes. */
    for (size_t i = 0; i < a->nruns; i++)
        if (a->runs[i].task == 1) {
            end_run(a, i);
            break;
        }
    cr_assert_eq(a->noutq, 4);
    cr_assert_str_eq(type_at(a, 0), "task_started");
    cr_assert_str_eq(type_at(a, 1), "null");
    cr_assert_str_eq(type_at(a, 2), "task_started");
    cr_assert_eq(int_at(a, 2, "task"), 2);
    cr_assert_str_eq(type_at(a, 3), "task_end");
    agent_done(a);
}
