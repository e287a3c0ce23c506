/* hrm raw-serve: stands where the master stands for one peer (an agent) and sends it frames as they are: the agents' malformed-message tests and protocol debugging. */
#define _GNU_SOURCE 1 /* memmem */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "cli.h"
#include "client.h"
#include "hrm/alloc.h"
#include "hrm/transport.h"

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every non-empty line of path, in order, to the peer; -1 when the file cannot be read. */
static int send_lines(struct hrm_server *s, const struct hrm_inmsg *to, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "hrm raw-serve: %s: cannot read\n", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int sent = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        if (n > 0 && line[n - 1] == '\n')
            n--;
        if (n == 0)
            continue;
        if (hrm_server_send_raw(s, to->id, to->idlen, line, (size_t)n) < 0)
            fprintf(stderr, "hrm raw-serve: line %d not sent\n", sent + 1);
        sent++;
    }
    free(line);
    fclose(f);
    return sent;
}

int cmd_raw_serve(int argc, char **argv)
{
    static const char usage[] =
        "usage: hrm raw-serve [options] FILE\n\n"
        "Listens where a master would, with the master's key, admitting the keys of\n"
        "KEYS/authorized.  When the first message comes (an agent's registration), sends\n"
        "that peer each line of FILE as one frame, as is, in order; then prints every\n"
        "message received, one line each ('recv: TEXT'), until every --until text has\n"
        "been received (each in some message, in any order) or --timeout seconds pass\n"
        "without any message.  Prints 'listening ENDPOINT' first.\n"
        "For the agents' protocol tests and debugging.\n"
        "exit status: 0 a peer came (and every --until text was seen), 1 otherwise\n\n"
        "options:\n"
        "  --state DIR     cluster state folder, as the client verbs take it (default\n"
        "                  $HRM_STATE, else .hrm)\n"
        "  --keys DIR      master.key and authorized (default DIR/keys of --state)\n"
        "  --listen ADDR   endpoint to bind (default tcp://127.0.0.1:*, a free port)\n"
        "  --until TEXT    stop once received messages have held TEXT (repeatable: all of\n"
        "                  them, up to 64; messages may come in any order)\n"
        "  --timeout S     seconds without a message before giving up (default 10)\n"
        "  -h, --help      this help\n";
    static const struct option opts[] = {{"keys", required_argument, NULL, 'k'},
                                         {"state", required_argument, NULL, 's'},
                                         {"listen", required_argument, NULL, 'l'},
                                         {"until", required_argument, NULL, 'u'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    enum { UNTIL_MAX = 64 };
    /* The state folder is found as every client verb finds it (an empty $HRM_STATE is unset);
     * the keys are the master's, so a user's $HRM_KEYS (client keys) does not apply. */
    struct client_opts copts;
    client_opts_init(&copts);
    const char *keys = NULL, *listen = "tcp://127.0.0.1:*", *until[UNTIL_MAX];
    bool until_seen[UNTIL_MAX] = {false};
    int nuntil = 0;
    double timeout_s = 10;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            keys = optarg;
            break;
        case 's':
            copts.state = optarg;
            break;
        case 'l':
            listen = optarg;
            break;
        case 'u':
            if (nuntil == UNTIL_MAX) {
                fprintf(stderr, "hrm raw-serve: at most %d --until texts\n", UNTIL_MAX);
                return CLI_USAGE;
            }
            until[nuntil++] = optarg;
            break;
        case 't':
        {
            char *end;
            timeout_s = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(timeout_s > 0 && timeout_s <= 86400)) {
                fprintf(stderr, "hrm raw-serve: --timeout: expected seconds in (0, 86400], not '%s'\n",
                        optarg);
                return CLI_USAGE;
            }
            break;
        }
        case 'h':
            fputs(usage, stdout);
            return CLI_OK;
        default:
            fputs(usage, stderr);
            return CLI_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "usage: hrm raw-serve [options] FILE\n");
        return CLI_USAGE;
    }
    char dir[1024], path[1100];
    if (keys)
        snprintf(dir, sizeof(dir), "%s", keys);
    else
        snprintf(dir, sizeof(dir), "%.1000s/keys", copts.state);
    snprintf(path, sizeof(path), "%s/authorized", dir);
    struct hrm_error err;
    struct hrm_keypair kp;
    struct hrm_authz *authz = NULL;
    struct hrm_server *s = NULL;
    void *zctx = NULL;
    int rc = CLI_FAIL;
    if (hrm_keys_load(dir, "master", false, &kp, &err) < 0 || !(authz = hrm_authz_load(path, &err))) {
        fprintf(stderr, "hrm raw-serve: %s\n", err.text);
        goto out;
    }
    if (!(zctx = hrm_zctx_new()) || !(s = hrm_server_new(zctx, listen, &kp, authz, &err))) {
        fprintf(stderr, "hrm raw-serve: %s\n", zctx ? err.text : "no ZeroMQ context");
        goto out;
    }
    printf("listening %s\n", hrm_server_endpoint(s));
    fflush(stdout);
    bool peer = false, seen = false;
    int nseen = 0;
    double quiet_since = mono_s();
    while (!seen && mono_s() - quiet_since < timeout_s) {
        zmq_pollitem_t items[2] = {{hrm_server_zsock(s, 0), 0, ZMQ_POLLIN, 0},
                                   {hrm_server_zsock(s, 1), 0, ZMQ_POLLIN, 0}};
        if (zmq_poll(items, 2, 100) < 0)
            break;
        if (items[1].revents & ZMQ_POLLIN)
            hrm_server_handle_zap(s);
        struct hrm_inmsg m;
        while (!seen && hrm_server_recv(s, &m) == 0) {
            quiet_since = mono_s();
            printf("recv: %.*s\n", (int)m.len, m.data);
            fflush(stdout); /* a test may read the lines as they come */
            for (int i = 0; i < nuntil; i++)
                if (!until_seen[i] && memmem(m.data, m.len, until[i], strlen(until[i]))) {
                    until_seen[i] = true;
                    nseen++;
                }
            seen = nuntil > 0 && nseen == nuntil;
            if (!peer) {
                peer = true;
                if (send_lines(s, &m, argv[optind]) < 0)
                    goto out;
            }
        }
    }
    rc = peer && (nuntil == 0 || seen) ? CLI_OK : CLI_FAIL;
    if (!peer)
        fprintf(stderr, "hrm raw-serve: no peer within %g s\n", timeout_s);
    for (int i = 0; peer && i < nuntil; i++)
        if (!until_seen[i])
            fprintf(stderr, "hrm raw-serve: '%s' not received within %g s of quiet\n", until[i],
                    timeout_s);
out:
    hrm_server_free(s);
    hrm_zctx_free(zctx);
    hrm_authz_free(authz);
    return rc;
}
