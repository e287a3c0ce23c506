/* CURVE key files: generation with zmq_curve_keypair, loading, and the master's allow-list with each key's binding. */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "hrm/alloc.h"
#include "hrm/transport.h"
#include "hrm/wire.h"

static const char *const key_names[] = {"master", "agent", "client", "scheduler"};
#define NKEYS 4
#define LINE_MAX_LEN 4096 /* a line of authorized, comments included */

struct hrm_authz {
    char path[1100];
    struct hrm_authz_entry *keys; /* sorted by public key */
    size_t n, cap;
    struct stat loaded;           /* the file as it was when keys were read */
    struct stat refused;          /* the last version that failed to parse (logged once) */
    uint64_t version;             /* counts the lists taken (hrm_authz_version) */
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

bool hrm_keys_valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > HRM_KEY_NAME_MAX || s[0] == '-' || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]))
            return false;
    return true;
}

/* The account of this process's real uid: who ran hrm keygen. */
static int own_account(char *out, size_t len, struct hrm_error *err)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) != 0 || !res)
        return hrm_errorf(err, -ENOENT, "uid %u has no account name: give the client key's "
                          "account with --user", (unsigned)getuid());
    if (!hrm_keys_valid_name(res->pw_name))
        return hrm_errorf(err, -EINVAL, "account '%s' cannot be written in authorized: give "
                          "--user", res->pw_name);
    snprintf(out, len, "%s", res->pw_name);
    return 0;
}

static int write_pair(const char *dir, const char *stem, const char *role,
                      const struct hrm_keypair *kp, bool force, struct hrm_error *err)
{
    char path[4096], text[512];
    snprintf(path, sizeof(path), "%s/%s.key", dir, stem);
    snprintf(text, sizeof(text),
             "# hrm %s key pair (CURVE, Z85): keep this file secret\npublic %s\nsecret %s\n",
             role, kp->pub, kp->sec);
    int rc = write_file(path, text, 0600, force, err);
    if (rc < 0)
        return rc;
    snprintf(path, sizeof(path), "%s/%s.pub", dir, stem);
    snprintf(text, sizeof(text), "%s\n", kp->pub);
    return write_file(path, text, 0644, true, err); /* a stale .pub without its key goes */
}

int hrm_keys_generate(const char *dir, bool force, const char *client_user,
                      struct hrm_error *err)
{
    char account[HRM_KEY_NAME_MAX + 1];
    if (!client_user && own_account(account, sizeof(account), err) < 0)
        return -EINVAL;
    if (client_user && !hrm_keys_valid_name(client_user))
        return hrm_errorf(err, -EINVAL, "--user '%s': expected 1..%d of A-Z a-z 0-9 . _ -",
                          client_user, HRM_KEY_NAME_MAX);
    if (!client_user)
        client_user = account;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return hrm_errorf(err, -errno, "%s: %s", dir, strerror(errno));
    struct hrm_keypair kp[NKEYS];
    for (int i = 0; i < NKEYS; i++)
        if (zmq_curve_keypair(kp[i].pub, kp[i].sec) != 0)
            return hrm_errorf(err, -ENOTSUP, "this libzmq has no CURVE support");
    for (int i = 0; i < NKEYS; i++) {
        int rc = write_pair(dir, key_names[i], key_names[i], &kp[i], force, err);
        if (rc < 0)
            return rc;
    }
    char path[4096], text[1024];
    snprintf(path, sizeof(path), "%s/authorized", dir);
    snprintf(text, sizeof(text),
             "# keys the master admits: ROLE Z85-PUBLIC-KEY [node=NAME | user=ACCOUNT [admin]]\n"
             "# agent: node=NAME binds the key to that node name (without it, the name of its\n"
             "#   first registration); client: user=ACCOUNT is the account its jobs run as, and\n"
             "#   admin lets it cancel and read every account's jobs (others: their own only)\n"
             "agent %s\nclient %s user=%s admin\nscheduler %s\n",
             kp[1].pub, kp[2].pub, client_user, kp[3].pub);
    int rc = write_file(path, text, 0600, force, err);
    return rc < 0 ? rc : hrm_keys_http_tokens(dir, force, err);
}

/* A bearer token: 32 random bytes in hex, so it can be pasted into a header or a URL. */
static int http_token_write(const char *dir, const char *name, bool force, struct hrm_error *err)
{
    unsigned char raw[32];
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return hrm_errorf(err, -errno, "getrandom: %s", strerror(errno));
    char text[2 * sizeof(raw) + 2];
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(text + 2 * i, 3, "%02x", raw[i]);
    strcat(text, "\n");
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int rc = write_file(path, text, 0600, force, err);
    return rc == -EEXIST && !force ? 0 : rc;
}

int hrm_keys_http_tokens(const char *dir, bool force, struct hrm_error *err)
{
    int rc = http_token_write(dir, HRM_HTTP_TOKEN_FILE, force, err);
    return rc < 0 ? rc : http_token_write(dir, HRM_HTTP_RO_TOKEN_FILE, force, err);
}

/* Rewrites DIR/authorized with `line` added, dropping the line of `old_pub` if given: a
 * temporary file renamed over it, so a master that re-reads it sees the old or the new list. */
static int authorized_put(const char *dir, const char *old_pub, const char *line,
                          struct hrm_error *err)
{
    char path[4096], tmp[4200], buf[LINE_MAX_LEN];
    snprintf(path, sizeof(path), "%s/authorized", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *in = fopen(path, "re");
    if (!in && errno != ENOENT)
        return hrm_errorf(err, -errno, "%s: %s", path, strerror(errno));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (in)
            fclose(in);
        return hrm_errorf(err, -e, "%s: %s", tmp, strerror(e));
    }
    bool at_line_start = true;
    while (in && fgets(buf, sizeof(buf), in)) {
        char role[16], key[128];
        if (old_pub && *old_pub && sscanf(buf, "%15s %127s", role, key) == 2 &&
            strcmp(key, old_pub) == 0)
            continue;
        fputs(buf, out);
        at_line_start = buf[strlen(buf) - 1] == '\n';
    }
    if (in)
        fclose(in);
    fprintf(out, "%s%s\n", at_line_start ? "" : "\n", line);
    if (fflush(out) != 0 || fsync(fileno(out)) != 0) {
        int e = errno;
        fclose(out);
        unlink(tmp);
        return hrm_errorf(err, -e, "%s: %s", tmp, strerror(e));
    }
    fclose(out);
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return hrm_errorf(err, -e, "%s: %s", path, strerror(e));
    }
    return 0;
}

/* Adds DIR/<stem>.key and .pub and its authorized line (role and binding).  An existing pair
 * is kept (0) unless force, which replaces it and its line. */
static int add_pair(const char *dir, const char *stem, const char *role, const char *binding,
                    bool force, struct hrm_error *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.key", dir, stem);
    struct hrm_keypair old = {0};
    bool exists = access(path, F_OK) == 0;
    if (exists && !force)
        return hrm_errorf(err, -EEXIST, "%s exists (use --force to replace it)", path);
    if (exists) /* its .pub names the line to drop (the .key may be refused for its mode) */
        hrm_keys_load(dir, stem, true, &old, NULL);
    struct hrm_keypair kp;
    if (zmq_curve_keypair(kp.pub, kp.sec) != 0)
        return hrm_errorf(err, -ENOTSUP, "this libzmq has no CURVE support");
    int rc = write_pair(dir, stem, role, &kp, force, err);
    if (rc < 0)
        return rc;
    char line[LINE_MAX_LEN];
    snprintf(line, sizeof(line), "%s %s%s%s", role, kp.pub, binding ? " " : "",
             binding ? binding : "");
    return authorized_put(dir, old.pub, line, err);
}

int hrm_keys_add_scheduler(const char *dir, struct hrm_error *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/scheduler.key", dir);
    if (access(path, F_OK) == 0)
        return 0;
    return add_pair(dir, "scheduler", "scheduler", NULL, false, err);
}

int hrm_keys_add_node(const char *dir, const char *node, bool force, struct hrm_error *err)
{
    if (!hrm_keys_valid_name(node))
        return hrm_errorf(err, -EINVAL, "--node '%s': a node name is 1..%d of A-Z a-z 0-9 . _ - "
                          "(not starting with . or -)", node, HRM_KEY_NAME_MAX);
    char stem[HRM_KEY_NAME_MAX + 16], binding[HRM_KEY_NAME_MAX + 16];
    snprintf(stem, sizeof(stem), "agent-%s", node);
    snprintf(binding, sizeof(binding), "node=%s", node);
    return add_pair(dir, stem, "agent", binding, force, err);
}

int hrm_keys_add_nodes(const char *dir, const char *prefix, int32_t count,
                       struct hrm_error *err)
{
    char name[HRM_KEY_NAME_MAX + 16], stem[HRM_KEY_NAME_MAX + 32];
    snprintf(name, sizeof(name), "%s%d", prefix, count);
    if (count < 1 || !hrm_keys_valid_name(prefix) || !hrm_keys_valid_name(name))
        return hrm_errorf(err, -EINVAL, "--node '%s' --node-count %d: names %s1..%s are 1..%d "
                          "of A-Z a-z 0-9 . _ - (not starting with . or -)", prefix, count,
                          prefix, name, HRM_KEY_NAME_MAX);
    /* Every pair first, then one rewrite of authorized with all their lines: adding them one
     * by one would rewrite (and fsync) the growing file once per node. */
    size_t cap = (size_t)count * (LINE_MAX_LEN / 4) + 1, len = 0;
    char *lines = hrm_alloc(cap);
    lines[0] = '\0';
    int rc = 0;
    for (int32_t i = 1; i <= count && rc == 0; i++) {
        struct hrm_keypair kp;
        snprintf(name, sizeof(name), "%s%d", prefix, i);
        snprintf(stem, sizeof(stem), "agent-%s", name);
        if (zmq_curve_keypair(kp.pub, kp.sec) != 0)
            rc = hrm_errorf(err, -ENOTSUP, "this libzmq has no CURVE support");
        else if ((rc = write_pair(dir, stem, "agent", &kp, false, err)) == 0)
            len += (size_t)snprintf(lines + len, cap - len, "%sagent %s node=%s",
                                    len ? "\n" : "", kp.pub, name);
    }
    if (rc == 0)
        rc = authorized_put(dir, NULL, lines, err);
    hrm_free(lines);
    return rc;
}

int hrm_keys_add_client(const char *dir, const char *name, const char *user, bool admin,
                        bool force, struct hrm_error *err)
{
    if (!hrm_keys_valid_name(name))
        return hrm_errorf(err, -EINVAL, "--client '%s': a key name is 1..%d of A-Z a-z 0-9 . _ - "
                          "(not starting with . or -)", name, HRM_KEY_NAME_MAX);
    if (!hrm_keys_valid_name(user))
        return hrm_errorf(err, -EINVAL, "--user '%s': an account is 1..%d of A-Z a-z 0-9 . _ -",
                          user, HRM_KEY_NAME_MAX);
    char stem[HRM_KEY_NAME_MAX + 16], binding[HRM_KEY_NAME_MAX + 16];
    snprintf(stem, sizeof(stem), "client-%s", name);
    snprintf(binding, sizeof(binding), "user=%s%s", user, admin ? " admin" : "");
    return add_pair(dir, stem, "client", binding, force, err);
}

static bool valid_z85(const char *s)
{
    if (strlen(s) != HRM_KEY_Z85 - 1)
        return false;
    uint8_t bin[32];
    return zmq_z85_decode(bin, s) != NULL;
}

/* Others who may write into the key folder may swap the keys or the allow-list. */
static int check_folder(const char *dir, struct hrm_error *err)
{
    struct stat st;
    if (stat(dir, &st) < 0)
        return hrm_errorf(err, -errno, "%s: %s", dir, strerror(errno));
    if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))
        return hrm_errorf(err, -EPERM, "%s: mode %04o lets other users replace the keys in it; "
                          "run chmod go-w %s", dir, (unsigned)(st.st_mode & 07777), dir);
    return 0;
}

/* A secret key others can read is no secret: refused, as ssh does, with the fix. */
static int check_private(const char *dir, const char *path, int fd, struct hrm_error *err)
{
    struct stat st;
    if (check_folder(dir, err) < 0)
        return -EPERM;
    if (fstat(fd, &st) < 0)
        return hrm_errorf(err, -errno, "%s: %s", path, strerror(errno));
    if (st.st_mode & 077)
        return hrm_errorf(err, -EPERM, "%s: mode %04o lets other users read this secret key; "
                          "run chmod 600 %s", path, (unsigned)(st.st_mode & 07777), path);
    return 0;
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
    if (!only_public && check_private(dir, path, fileno(f), err) < 0) {
        fclose(f);
        return -EPERM;
    }
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

/* ---- the allow-list ---- */

static int by_pub(const void *a, const void *b)
{
    return strcmp(((const struct hrm_authz_entry *)a)->pub,
                  ((const struct hrm_authz_entry *)b)->pub);
}

/* One line: "ROLE KEY [node=NAME | user=ACCOUNT [admin]]"; 0 with *e filled, 1 for a blank or
 * comment line, negative with the reason. */
static int parse_line(char *line, const char *where, struct hrm_authz_entry *e,
                      struct hrm_error *err)
{
    char *save = NULL, *tok[5] = {0};
    int n = 0;
    for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == 0 && t[0] == '#')
            return 1;
        if (n == 5)
            break;
        tok[n++] = t;
    }
    if (n == 0)
        return 1;
    memset(e, 0, sizeof(*e));
    e->role = strcmp(tok[0], "agent") == 0       ? HRM_PEER_AGENT
              : strcmp(tok[0], "client") == 0    ? HRM_PEER_CLIENT
              : strcmp(tok[0], "scheduler") == 0 ? HRM_PEER_SCHED
                                                 : 0;
    int most = e->role == HRM_PEER_CLIENT ? 4 : 3;
    if (!e->role || n < 2 || !valid_z85(tok[1]) || n > most)
        return hrm_errorf(err, -EINVAL, "%s: expected 'agent KEY [node=NAME]', "
                          "'client KEY user=ACCOUNT [admin]' or 'scheduler KEY'", where);
    snprintf(e->pub, sizeof(e->pub), "%s", tok[1]);
    if (n == 3 && e->role == HRM_PEER_SCHED)
        return hrm_errorf(err, -EINVAL, "%s: '%s': a scheduler key takes nothing after it", where,
                          tok[2]);
    const char *opt = e->role == HRM_PEER_AGENT ? "node=" : "user=";
    if (n >= 3) {
        if (strncmp(tok[2], opt, 5) != 0 || !hrm_keys_valid_name(tok[2] + 5))
            return hrm_errorf(err, -EINVAL, "%s: '%s': expected %sNAME (1..%d of A-Z a-z 0-9 . _ -)",
                              where, tok[2], opt, HRM_KEY_NAME_MAX);
        snprintf(e->bound, sizeof(e->bound), "%s", tok[2] + 5);
    }
    if (n == 4) {
        if (strcmp(tok[3], "admin") != 0)
            return hrm_errorf(err, -EINVAL, "%s: '%s': the only word a client key takes after "
                              "user=ACCOUNT is admin", where, tok[3]);
        e->admin = true;
    }
    if (e->role == HRM_PEER_CLIENT && !e->bound[0])
        return hrm_errorf(err, -EINVAL, "%s: a client key needs the account its jobs run as: "
                          "write 'client KEY user=ACCOUNT' (hrm keygen writes it)", where);
    return 0;
}

/* Reads path into a (keys replaced only on success). */
static int authz_read(struct hrm_authz *a, struct hrm_error *err)
{
    FILE *f = fopen(a->path, "re");
    if (!f)
        return hrm_errorf(err, -errno, "%s: %s", a->path, strerror(errno));
    char dir[1100] = ".";
    const char *slash = strrchr(a->path, '/');
    if (slash)
        snprintf(dir, sizeof(dir), "%.*s", slash == a->path ? 1 : (int)(slash - a->path), a->path);
    struct stat st;
    if (check_folder(dir, err) < 0) {
        fclose(f);
        return -EPERM;
    }
    if (fstat(fileno(f), &st) < 0 || (st.st_mode & 022)) {
        fclose(f);
        return hrm_errorf(err, -EPERM, "%s: other users may change it (mode %04o): run "
                          "chmod 600 %s", a->path, (unsigned)(st.st_mode & 07777), a->path);
    }
    struct hrm_authz_entry *keys = NULL;
    size_t n = 0, cap = 0;
    char line[LINE_MAX_LEN], where[1200];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        snprintf(where, sizeof(where), "%s:%d", a->path, ++lineno);
        HRM_GROW(keys, cap, n + 1);
        rc = parse_line(line, where, &keys[n], err);
        if (rc == 1)
            rc = 0;
        else if (rc == 0)
            n++;
    }
    fclose(f);
    if (rc == 0 && n > 0)
        qsort(keys, n, sizeof(*keys), by_pub);
    for (size_t i = 0; rc == 0 && i + 1 < n; i++)
        if (strcmp(keys[i].pub, keys[i + 1].pub) == 0)
            rc = hrm_errorf(err, -EINVAL, "%s: key %s is listed twice", a->path, keys[i].pub);
    for (size_t i = 0; rc == 0 && i < n; i++)
        for (size_t k = i + 1; keys[i].role == HRM_PEER_AGENT && keys[i].bound[0] && k < n; k++)
            if (keys[k].role == HRM_PEER_AGENT && strcmp(keys[i].bound, keys[k].bound) == 0)
                rc = hrm_errorf(err, -EINVAL, "%s: node=%s is given to two agent keys", a->path,
                                keys[i].bound);
    if (rc < 0) {
        hrm_free(keys);
        return rc;
    }
    hrm_free(a->keys);
    a->keys = keys;
    a->n = n;
    a->cap = cap;
    a->loaded = st;
    a->version++;
    return 0;
}

struct hrm_authz *hrm_authz_load(const char *path, struct hrm_error *err)
{
    struct hrm_authz *a = hrm_calloc(1, sizeof(*a));
    snprintf(a->path, sizeof(a->path), "%s", path);
    if (authz_read(a, err) < 0) {
        hrm_authz_free(a);
        return NULL;
    }
    return a;
}

struct hrm_authz *hrm_authz_new_list(void)
{
    return hrm_calloc(1, sizeof(struct hrm_authz)); /* no path: hrm_authz_refresh keeps it */
}

void hrm_authz_set(struct hrm_authz *a, const struct hrm_authz_entry *keys, size_t n)
{
    a->keys = hrm_realloc(a->keys, (n ? n : 1) * sizeof(*a->keys));
    if (n)
        memcpy(a->keys, keys, n * sizeof(*keys));
    a->n = n;
    a->cap = n ? n : 1;
    if (n > 1)
        qsort(a->keys, n, sizeof(*a->keys), by_pub);
    a->version++;
}

uint64_t hrm_authz_version(const struct hrm_authz *a)
{
    return a->version;
}

const struct hrm_authz_entry *hrm_authz_at(const struct hrm_authz *a, size_t i)
{
    return i < a->n ? &a->keys[i] : NULL;
}

static bool same_file(const struct stat *x, const struct stat *y)
{
    return x->st_ino == y->st_ino && x->st_dev == y->st_dev && x->st_size == y->st_size &&
           x->st_mtim.tv_sec == y->st_mtim.tv_sec && x->st_mtim.tv_nsec == y->st_mtim.tv_nsec;
}

int hrm_authz_refresh(struct hrm_authz *a, struct hrm_error *err)
{
    struct stat st;
    if (!a->path[0] || stat(a->path, &st) < 0 || same_file(&st, &a->loaded) || same_file(&st, &a->refused))
        return 0;
    if (authz_read(a, err) < 0) {
        a->refused = st;
        return -EINVAL;
    }
    return 1;
}

void hrm_authz_free(struct hrm_authz *a)
{
    if (!a)
        return;
    hrm_free(a->keys);
    hrm_free(a);
}

const struct hrm_authz_entry *hrm_authz_find(const struct hrm_authz *a, const char *z85)
{
    struct hrm_authz_entry probe;
    snprintf(probe.pub, sizeof(probe.pub), "%s", z85);
    return a->n ? bsearch(&probe, a->keys, a->n, sizeof(*a->keys), by_pub) : NULL;
}

int hrm_authz_role(const struct hrm_authz *a, const char *z85)
{
    const struct hrm_authz_entry *e = hrm_authz_find(a, z85);
    return e ? e->role : 0;
}

const struct hrm_authz_entry *hrm_authz_node_key(const struct hrm_authz *a, const char *node)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->keys[i].role == HRM_PEER_AGENT && strcmp(a->keys[i].bound, node) == 0)
            return &a->keys[i];
    return NULL;
}

size_t hrm_authz_count(const struct hrm_authz *a)
{
    return a->n;
}
