/* Client side of the wire protocol for the CLI verbs: locate the master, load keys, call with a deadline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "client.h"
#include "hrm/alloc.h"
#include "hrm/transport.h"
#include "hrm/wire.h"

struct client {
    void *zctx;
    struct hrm_conn *conn;
    long long next_req;
    double timeout_s;
    char endpoint[512];
};

void client_opts_init(struct client_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->state = getenv("HRM_STATE");
    if (!o->state || !*o->state)
        o->state = ".hrm";
    o->timeout_s = 10;
    o->keys = getenv("HRM_KEYS"); /* a user's own keys: client.key and master.pub */
    if (o->keys && !*o->keys)
        o->keys = NULL;
}

int client_opt(struct client_opts *o, int opt, const char *arg)
{
    switch (opt) {
    case 0x101:
        o->state = arg;
        return 1;
    case 0x102:
        o->master = arg;
        return 1;
    case 0x103:
        o->keys = arg;
        return 1;
    case 0x104:
        o->json = true;
        return 1;
    case 0x105: {
        char *end;
        o->timeout_s = strtod(arg, &end);
        if (*end || !(o->timeout_s > 0)) {
            fprintf(stderr, "hrm: --timeout: expected a positive number of seconds\n");
            return -1;
        }
        return 1;
    }
    default:
        return 0;
    }
}

struct client *client_open(const struct client_opts *o)
{
    struct client *c = hrm_calloc(1, sizeof(*c));
    c->timeout_s = o->timeout_s;
    c->next_req = (long long)time(NULL) % 100000 * 1000;
    if (o->master) {
        snprintf(c->endpoint, sizeof(c->endpoint), "%s", o->master);
    } else {
        char path[1100];
        snprintf(path, sizeof(path), "%s/endpoint", o->state);
        FILE *f = fopen(path, "re");
        if (!f) {
            fprintf(stderr,
                    "hrm: no master found: %s does not exist (start one with 'hrm up' or "
                    "'hrm master --state %s', or give --master)\n",
                    path, o->state);
            hrm_free(c);
            return NULL;
        }
        if (!fgets(c->endpoint, sizeof(c->endpoint), f))
            c->endpoint[0] = '\0';
        fclose(f);
        c->endpoint[strcspn(c->endpoint, "\n")] = '\0';
    }
    char keys[1100];
    snprintf(keys, sizeof(keys), "%s", o->keys ? o->keys : "");
    if (!o->keys)
        snprintf(keys, sizeof(keys), "%.1000s/keys", o->state);
    struct hrm_keypair mine, master;
    struct hrm_error err;
    if (hrm_keys_load(keys, "client", false, &mine, &err) < 0 ||
        hrm_keys_load(keys, "master", true, &master, &err) < 0) {
        fprintf(stderr, "hrm: %s\n", err.text);
        hrm_free(c);
        return NULL;
    }
    c->zctx = hrm_zctx_new();
    c->conn = c->zctx ? hrm_conn_new(c->zctx, c->endpoint, master.pub, &mine, &err) : NULL;
    if (!c->conn || hrm_conn_wait_ready(c->conn, (int)(c->timeout_s * 1000), &err) < 0) {
        fprintf(stderr, "hrm: %s\n", err.text);
        client_close(c);
        return NULL;
    }
    return c;
}

void client_close(struct client *c)
{
    if (!c)
        return;
    hrm_conn_free(c->conn);
    hrm_zctx_free(c->zctx);
    hrm_free(c);
}

json_t *client_call_ex(struct client *c, json_t *req, double timeout_s, double resend_s,
                       int *code, bool *no_answer)
{
    long long id = ++c->next_req;
    json_object_set_new(req, "req", json_integer(id));
    *code = 1;
    if (no_answer)
        *no_answer = false;
    double start = cli_mono_s(), last_send = 0;
    for (;;) {
        double now = cli_mono_s();
        if (timeout_s >= 0 && now - start > timeout_s) {
            if (no_answer)
                *no_answer = true; /* the caller says what that means for its request */
            else
                fprintf(stderr, "hrm: no answer from the master at %s within %.0f s\n",
                        c->endpoint, timeout_s);
            return NULL;
        }
        if (last_send == 0 || (resend_s > 0 && now - last_send >= resend_s)) {
            int rc = hrm_conn_send(c->conn, req);
            if (rc < 0 && rc != -EAGAIN) {
                fprintf(stderr, "hrm: cannot send to %s: %s\n", c->endpoint, hrm_strerror(rc));
                return NULL;
            }
            last_send = now;
        }
        json_t *r;
        struct hrm_error err;
        int rc = hrm_conn_recv(c->conn, 200, &r, &err);
        if (rc == -ETIMEDOUT)
            continue;
        if (rc < 0) {
            fprintf(stderr, "hrm: %s\n", err.text);
            return NULL;
        }
        if (json_integer_value(json_object_get(r, "req")) != id) {
            json_decref(r); /* an answer to an earlier try of this command */
            continue;
        }
        const char *type = json_string_value(json_object_get(r, "type"));
        if (type && strcmp(type, "error") == 0) {
            const char *ecode = json_string_value(json_object_get(r, "code"));
            fprintf(stderr, "hrm: %s\n", json_string_value(json_object_get(r, "message")));
            *code = ecode && (strcmp(ecode, "bad_spec") == 0 || strcmp(ecode, "bad_field") == 0)
                        ? 2
                        : 1;
            json_decref(r);
            return NULL;
        }
        *code = 0;
        return r;
    }
}

json_t *client_call_long(struct client *c, json_t *req, double timeout_s, double resend_s,
                         int *code)
{
    return client_call_ex(c, req, timeout_s, resend_s, code, NULL);
}

const char *client_endpoint(const struct client *c)
{
    return c->endpoint;
}

json_t *client_call(struct client *c, json_t *req, int *code)
{
    return client_call_long(c, req, c->timeout_s, 0, code);
}

long long client_send(struct client *c, json_t *req)
{
    long long id = ++c->next_req;
    json_object_set_new(req, "req", json_integer(id));
    int rc = hrm_conn_send(c->conn, req);
    if (rc < 0) {
        fprintf(stderr, "hrm: cannot send to %s: %s\n", c->endpoint, hrm_strerror(rc));
        return -1;
    }
    return id;
}

int client_send_raw(struct client *c, const void *data, size_t len)
{
    return hrm_conn_send_raw(c->conn, data, len);
}

json_t *client_recv(struct client *c, double timeout_s)
{
    json_t *r = NULL;
    struct hrm_error err;
    if (hrm_conn_recv(c->conn, (int)(timeout_s * 1000), &r, &err) < 0)
        return NULL;
    return r;
}
