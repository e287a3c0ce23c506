/* CURVE key files: generation with zmq_curve_keypair, loading, and the master's allow-list. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "hrm/alloc.h"
#include "hrm/transport.h"
#include "hrm/wire.h"

static const char *const key_names[] = {"master", "agent", "client", "scheduler"};
#define NKEYS 4

struct hrm_authz {
    struct {
        int role;
        char pub[HRM_KEY_Z85];
    } *keys;
    size_t n, cap;
};

static int write_file(const char *path, const char *text, mode_t mode, bool force,
                      struct hrm_error *err)
{
    int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (force ? 0 : O_EXCL);
    int fd = open(path, flags, mode);
    if (fd < 0) {
        int e = errno;
        if (e == EEXIST)
            return hrm_errorf(err, -EEXIST, "%s exists (use --force to replace the keys)", path);
        return hrm_errorf(err, -e, "%s: %s", path, strerror(e));
    }
    size_t len = strlen(text);
    ssize_t w = write(fd, text, len);
    int e = errno;
    if (fchmod(fd, mode) < 0 && w >= 0)
        w = -1, e = errno;
    close(fd);
    if (w != (ssize_t)len)
        return hrm_errorf(err, -(w < 0 ? e : EIO), "%s: short write", path);
    return 0;
}

int hrm_keys_generate(const char *dir, bool force, struct hrm_error *err)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return hrm_errorf(err, -errno, "%s: %s", dir, strerror(errno));
    struct hrm_keypair kp[NKEYS];
    for (int i = 0; i < NKEYS; i++)
        if (zmq_curve_keypair(kp[i].pub, kp[i].sec) != 0)
            return hrm_errorf(err, -ENOTSUP, "this libzmq has no CURVE support");
    char path[4096], text[512];
    for (int i = 0; i < NKEYS; i++) {
        snprintf(path, sizeof(path), "%s/%s.key", dir, key_names[i]);
        snprintf(text, sizeof(text),
                 "# hrm %s key pair (CURVE, Z85): keep this file secret\npublic %s\nsecret %s\n",
                 key_names[i], kp[i].pub, kp[i].sec);
        int rc = write_file(path, text, 0600, force, err);
        if (rc < 0)
            return rc;
        snprintf(path, sizeof(path), "%s/%s.pub", dir, key_names[i]);
        snprintf(text, sizeof(text), "%s\n", kp[i].pub);
        if ((rc = write_file(path, text, 0644, force, err)) < 0)
            return rc;
    }
    snprintf(path, sizeof(path), "%s/authorized", dir);
    snprintf(text, sizeof(text),
             "# keys the master admits: ROLE Z85-PUBLIC-KEY (roles: agent, client, scheduler)\n"
             "agent %s\nclient %s\nscheduler %s\n",
             kp[1].pub, kp[2].pub, kp[3].pub);
    return write_file(path, text, 0600, force, err);
}

int hrm_keys_add_scheduler(const char *dir, struct hrm_error *err)
{
    char path[4096], text[512];
    snprintf(path, sizeof(path), "%s/scheduler.key", dir);
    if (access(path, F_OK) == 0)
        return 0;
    struct hrm_keypair kp;
    if (zmq_curve_keypair(kp.pub, kp.sec) != 0)
        return hrm_errorf(err, -ENOTSUP, "this libzmq has no CURVE support");
    snprintf(text, sizeof(text),
             "# hrm scheduler key pair (CURVE, Z85): keep this file secret\npublic %s\nsecret %s\n",
             kp.pub, kp.sec);
    int rc = write_file(path, text, 0600, false, err);
    if (rc < 0)
        return rc;
    snprintf(path, sizeof(path), "%s/scheduler.pub", dir);
    snprintf(text, sizeof(text), "%s\n", kp.pub);
    if ((rc = write_file(path, text, 0644, true, err)) < 0) /* a stale .pub without its key */
        return rc;
    snprintf(path, sizeof(path), "%s/authorized", dir);
    FILE *f = fopen(path, "ae");
    if (!f)
        return hrm_errorf(err, -errno, "%s: %s", path, strerror(errno));
    fprintf(f, "scheduler %s\n", kp.pub);
    if (fclose(f) != 0)
        return hrm_errorf(err, -errno, "%s: %s", path, strerror(errno));
    return 0;
}

static bool valid_z85(const char *s)
{
    if (strlen(s) != HRM_KEY_Z85 - 1)
        return false;
    uint8_t bin[32];
    return zmq_z85_decode(bin, s) != NULL;
}

int hrm_keys_load(const char *dir, const char *name, bool only_public, struct hrm_keypair *kp,
                  struct hrm_error *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.%s", dir, name, only_public ? "pub" : "key");
    FILE *f = fopen(path, "re");
    if (!f)
        return hrm_errorf(err, -errno, "%s: %s (run 'hrm keygen %s')", path, strerror(errno),
                          dir);
    struct hrm_keypair k = {0};
    char line[256];
    while (fgets(line, sizeof(line), f)) {
        char word[16], val[128];
        if (line[0] == '#')
            continue;
        char *dst = NULL;
        if (only_public) {
            if (sscanf(line, "%127s", val) == 1)
                dst = k.pub;
        } else if (sscanf(line, "%15s %127s", word, val) == 2) {
            dst = strcmp(word, "public") == 0 ? k.pub : strcmp(word, "secret") == 0 ? k.sec : NULL;
        }
        /* A key of the wrong length stays empty and fails the check below. */
        if (dst && strlen(val) == HRM_KEY_Z85 - 1)
            snprintf(dst, HRM_KEY_Z85, "%.40s", val);
    }
    fclose(f);
    if (!valid_z85(k.pub) || (!only_public && !valid_z85(k.sec)))
        return hrm_errorf(err, -EINVAL, "%s: not a key file of hrm keygen", path);
    *kp = k;
    return 0;
}

struct hrm_authz *hrm_authz_load(const char *path, struct hrm_error *err)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        hrm_errorf(err, -errno, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct hrm_authz *a = hrm_calloc(1, sizeof(*a));
    char line[256];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char role[16], key[128];
        int n = sscanf(line, "%15s %127s", role, key);
        if (n <= 0 || role[0] == '#')
            continue;
        int r = strcmp(role, "agent") == 0       ? HRM_PEER_AGENT
                : strcmp(role, "client") == 0    ? HRM_PEER_CLIENT
                : strcmp(role, "scheduler") == 0 ? HRM_PEER_SCHED
                                                 : 0;
        if (n != 2 || !r || !valid_z85(key)) {
            hrm_errorf(err, -EINVAL, "%s:%d: expected 'agent KEY', 'client KEY' or 'scheduler KEY'",
                       path, lineno);
            fclose(f);
            hrm_authz_free(a);
            return NULL;
        }
        HRM_GROW(a->keys, a->cap, a->n + 1);
        a->keys[a->n].role = r;
        snprintf(a->keys[a->n].pub, HRM_KEY_Z85, "%.40s", key);
        a->n++;
    }
    fclose(f);
    return a;
}

void hrm_authz_free(struct hrm_authz *a)
{
    if (!a)
        return;
    hrm_free(a->keys);
    hrm_free(a);
}

int hrm_authz_role(const struct hrm_authz *a, const char *z85)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->keys[i].pub, z85) == 0)
            return a->keys[i].role;
    return 0;
}
