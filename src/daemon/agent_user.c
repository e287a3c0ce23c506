/* The account a task runs as, resolved before clone, and a small cache of those resolutions: a lookup (getpwnam_r + getgrouplist parse /etc/passwd and /etc/group) costs more than the rest of a launch. */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/log.h"

static int64_t ts_ns(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Any edit of the file (in place or by rename, as useradd and vipw do) changes one of these. */
static void stamp_of(const char *path, struct user_stamp *s)
{
    struct stat st;
    memset(s, 0, sizeof(*s));
    if (stat(path, &st) < 0)
        return; /* a missing file is a state too: it compares equal to itself */
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->size = st.st_size;
    s->mtime_ns = ts_ns(st.st_mtim);
    s->ctime_ns = ts_ns(st.st_ctim);
}

void usercache_stamps(struct user_stamp st[2])
{
    stamp_of("/etc/passwd", &st[0]);
    stamp_of("/etc/group", &st[1]);
}

static bool stamp_eq(const struct user_stamp *a, const struct user_stamp *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

bool usercache_find(struct user_cache *c, const char *name, const struct user_stamp st[2],
                    int64_t now_us, struct task_user *u, const gid_t **groups)
{
    if (!stamp_eq(&c->stamp[0], &st[0]) || !stamp_eq(&c->stamp[1], &st[1])) {
        /* The account files changed: every entry may be stale. */
        memset(c->slot, 0, sizeof(c->slot));
        c->stamp[0] = st[0];
        c->stamp[1] = st[1];
        return false;
    }
    for (size_t i = 0; i < USER_CACHE_SLOTS; i++) {
        struct user_cache_slot *s = &c->slot[i];
        if (!s->used || strcmp(s->name, name) != 0)
            continue;
        if (now_us - s->at_us >= USER_CACHE_TTL_US || now_us < s->at_us) {
            s->used = false; /* other sources (LDAP, sssd) change without touching the files */
            return false;
        }
        *u = s->user;
        *groups = s->groups;
        return true;
    }
    return false;
}

void usercache_store(struct user_cache *c, const char *name, const struct user_stamp st[2],
                     int64_t now_us, const struct task_user *u, const gid_t *groups)
{
    if (strlen(name) >= sizeof(c->slot[0].name) || u->ngroups > USER_CACHE_GROUPS)
        return; /* rare: such a user is looked up at each launch, as before */
    if (!stamp_eq(&c->stamp[0], &st[0]) || !stamp_eq(&c->stamp[1], &st[1]))
        return; /* resolved from files that have changed since: not worth keeping */
    struct user_cache_slot *s = NULL;
    for (size_t i = 0; i < USER_CACHE_SLOTS && !s; i++)
        if (c->slot[i].used && strcmp(c->slot[i].name, name) == 0)
            s = &c->slot[i];
    if (!s) { /* the oldest goes */
        s = &c->slot[0];
        for (size_t i = 1; i < USER_CACHE_SLOTS; i++)
            if (!c->slot[i].used || (s->used && c->slot[i].at_us < s->at_us))
                s = &c->slot[i];
    }
    memset(s, 0, sizeof(*s));
    s->used = true;
    snprintf(s->name, sizeof(s->name), "%s", name);
    s->user = *u;
    s->at_us = now_us;
    if (u->ngroups)
        memcpy(s->groups, groups, u->ngroups * sizeof(*groups));
}

/* The lookup itself: NSS (files, LDAP...), then the supplementary groups into a->groups. */
static int resolve_now(struct agent *a, const char *name, struct task_user *u, char *why,
                       size_t len)
{
    struct passwd pw, *found = NULL;
    char buf[16384];
    int rc = getpwnam_r(name, &pw, buf, sizeof(buf), &found);
    if (!found) {
        if (rc == 0 || rc == ENOENT || rc == ESRCH)
            snprintf(why, len, "no such user '%.40s' on %s", name, a->name);
        else
            snprintf(why, len, "user '%.40s' on %s: %s", name, a->name, strerror(rc));
        return -1;
    }
    if (pw.pw_uid == geteuid())
        return 0; /* already: keep the agent's own groups */
    if (geteuid() != 0) {
        snprintf(why, len, "cannot run as user '%.40s' on %s: the agent runs as uid %u, not root",
                 name, a->name, (unsigned)geteuid());
        return -1;
    }
    u->change = true;
    u->uid = pw.pw_uid;
    u->gid = pw.pw_gid;
    snprintf(u->name, sizeof(u->name), "%s", pw.pw_name);
    snprintf(u->home, sizeof(u->home), "%s", pw.pw_dir ? pw.pw_dir : "/");
    /* Its supplementary groups, as a login would give them (the child may not read files). */
    for (;;) {
        int n = (int)a->cap_groups;
        if (n > 0 && getgrouplist(pw.pw_name, pw.pw_gid, a->groups, &n) >= 0) {
            u->ngroups = (size_t)n;
            return 0;
        }
        HRM_GROW(a->groups, a->cap_groups, (size_t)(n > 16 ? n : 16));
    }
}

int exec_user_resolve(struct agent *a, const char *name, struct task_user *u, char *why,
                      size_t len)
{
    memset(u, 0, sizeof(*u));
    if (!name)
        return 0; /* a master that names no user: the task runs as the agent does */
    struct user_stamp st[2];
    int64_t now = hrm_mono_us();
    if (a->users) {
        /* Two stat calls cost half a lookup: a burst of launches shares one check. */
        struct user_cache *c = a->users;
        if (!c->checked_us || now - c->checked_us >= USER_CACHE_RECHECK_US || now < c->checked_us) {
            usercache_stamps(c->seen);
            c->checked_us = now;
        }
        memcpy(st, c->seen, sizeof(st));
        const gid_t *groups;
        if (usercache_find(a->users, name, st, now, u, &groups)) {
            if (u->ngroups) {
                HRM_GROW(a->groups, a->cap_groups, u->ngroups);
                memcpy(a->groups, groups, u->ngroups * sizeof(*groups));
            }
            return 0;
        }
    }
    if (resolve_now(a, name, u, why, len) < 0)
        return -1; /* not kept: the account may be created before the next launch */
    if (a->users) {
        a->users->lookups++;
        usercache_store(a->users, name, st, now, u, a->groups);
        hrm_log(HRM_LOG_DEBUG, "user '%s' resolved (uid %u, %zu groups%s): kept until "
                "/etc/passwd or /etc/group changes, %d s at most", name,
                (unsigned)(u->change ? u->uid : geteuid()), u->ngroups,
                u->change ? "" : ", the agent's own", USER_CACHE_TTL_US / 1000000);
    }
    return 0;
}
