/* What the client verbs share: where the master is, the keys, one request-reply call. */
#ifndef HRM_CLI_CLIENT_H
#define HRM_CLI_CLIENT_H

#include <jansson.h>
#include <stdbool.h>

struct client_opts {
    const char *state;  /* --state, $HRM_STATE, else ".hrm" */
    const char *master; /* --master: overrides <state>/endpoint */
    const char *keys;   /* --keys or $HRM_KEYS: overrides <state>/keys */
    bool json;
    double timeout_s;   /* per request; default 10 */
};

struct client;

/* Connects (waiting for the CURVE handshake).  NULL after printing why
 * (master down, key refused, no keys) to stderr. */
struct client *client_open(const struct client_opts *o);
void client_close(struct client *c);
/* Sends req (type and fields set; "req" is added) and waits for the reply
 * with the same req.  Returns the reply (new reference) or NULL after printing
 * the error; *code is the CLI exit code to use then (1, or 2 for a bad spec). */
json_t *client_call(struct client *c, json_t *req, int *code);
/* Same, waiting up to timeout_s (< 0: forever) and resending the request
 * every resend_s so a restarted master learns it again. */
json_t *client_call_long(struct client *c, json_t *req, double timeout_s, double resend_s,
                         int *code);
/* Same; when no answer came within timeout_s, prints nothing and sets *no_answer
 * (the request may or may not have been applied: the caller knows what to say). */
json_t *client_call_ex(struct client *c, json_t *req, double timeout_s, double resend_s,
                       int *code, bool *no_answer);
/* The master's endpoint this client talks to (borrowed). */
const char *client_endpoint(const struct client *c);

/* Pipelined requests: sends req (type and fields set; "req" is added) without
 * waiting; returns the request id (match it in replies from client_recv), or
 * -1 after printing why. */
long long client_send(struct client *c, json_t *req);

/* Raw frames (hrm raw): send as is; receive one reply within timeout_s, or NULL. */
int client_send_raw(struct client *c, const void *data, size_t len);
json_t *client_recv(struct client *c, double timeout_s);

/* Common options of the client verbs, for getopt_long tables. */
#define CLIENT_LONG_OPTS                                                                       \
    {"state", required_argument, NULL, 0x101}, {"master", required_argument, NULL, 0x102},     \
        {"keys", required_argument, NULL, 0x103}, {"json", no_argument, NULL, 0x104},          \
        {"timeout", required_argument, NULL, 0x105}, {"help", no_argument, NULL, 'h'}

#define CLIENT_OPTS_HELP                                                                       \
    "  --state DIR     cluster state folder (default $HRM_STATE, else .hrm)\n"                \
    "  --master ADDR   master endpoint, e.g. tcp://10.0.0.1:7117 (default: DIR/endpoint)\n" \
    "  --keys DIR      key folder: client.key, master.pub (default $HRM_KEYS, else DIR/keys)\n" \
    "  --json          machine-readable output\n"                                              \
    "  --timeout S     seconds to wait for the master (default 10)\n"                         \
    "  -h, --help      this help\n"

/* Handles one of the common options; returns 1 if it was one, -1 on a bad value. */
int client_opt(struct client_opts *o, int opt, const char *arg);
void client_opts_init(struct client_opts *o);

#endif
