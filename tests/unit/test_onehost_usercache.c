/* The agent's cache of resolved task users: reused while /etc/passwd and /etc/group are unchanged and young enough, emptied when either changes, failures never kept. */
#include <criterion/criterion.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent_private.h"
#include "hrm/alloc.h"

static void stamps(struct user_stamp st[2], int64_t passwd_mtime)
{
    memset(st, 0, 2 * sizeof(*st));
    st[0].ino = 11;
    st[0].size = 1000;
    st[0].mtime_ns = passwd_mtime;
    st[1].ino = 12;
    st[1].size = 500;
}

static struct task_user alice(void)
{
    struct task_user u = {.change = true, .uid = 1001, .gid = 1001, .ngroups = 2};
    snprintf(u.name, sizeof(u.name), "alice");
    snprintf(u.home, sizeof(u.home), "/home/alice");
    return u;
}

/* A cache, alice's resolution and her two groups, the account files stamped as at mtime 1. */
struct fixture {
    struct user_cache *c;
    struct user_stamp st[2];
    struct task_user u, got;
    gid_t groups[2];
    const gid_t *g;
};

static void fixture_init(struct fixture *f)
{
    memset(f, 0, sizeof(*f));
    f->c = hrm_calloc(1, sizeof(*f->c));
    stamps(f->st, 1);
    f->u = alice();
    f->groups[0] = 1001;
    f->groups[1] = 27;
}

Test(onehost_usercache, a_resolution_is_reused_with_its_groups)
{
    struct fixture f;
    fixture_init(&f);
    cr_assert_not(usercache_find(f.c, "alice", f.st, 0, &f.got, &f.g), "an empty cache has alice");
    usercache_store(f.c, "alice", f.st, 0, &f.u, f.groups);
    cr_assert(usercache_find(f.c, "alice", f.st, 1000, &f.got, &f.g));
    cr_assert(f.got.change);
    cr_assert_eq(f.got.uid, 1001);
    cr_assert_eq(f.got.gid, 1001);
    cr_assert_str_eq(f.got.home, "/home/alice");
    cr_assert_eq(f.got.ngroups, 2);
    cr_assert_eq(f.g[0], 1001);
    cr_assert_eq(f.g[1], 27);
    cr_assert_not(usercache_find(f.c, "bob", f.st, 1000, &f.got, &f.g), "bob was never resolved");
    hrm_free(f.c);
}

Test(onehost_usercache, a_changed_account_file_empties_it)
{
    struct fixture f;
    fixture_init(&f);
    struct user_stamp edited[2];
    stamps(edited, 2); /* /etc/passwd rewritten (userdel, usermod) */
    usercache_find(f.c, "alice", f.st, 0, &f.got, &f.g);
    usercache_store(f.c, "alice", f.st, 0, &f.u, f.groups);
    cr_assert_not(usercache_find(f.c, "alice", edited, 10, &f.got, &f.g));
    /* A resolution made from the files as they were before is not kept. */
    usercache_store(f.c, "alice", f.st, 20, &f.u, f.groups);
    cr_assert_not(usercache_find(f.c, "alice", edited, 30, &f.got, &f.g));
    usercache_store(f.c, "alice", edited, 40, &f.u, f.groups);
    cr_assert(usercache_find(f.c, "alice", edited, 50, &f.got, &f.g));
    edited[1].ino = 99; /* /etc/group replaced by a rename */
    cr_assert_not(usercache_find(f.c, "alice", edited, 60, &f.got, &f.g));
    hrm_free(f.c);
}

Test(onehost_usercache, an_entry_expires)
{
    struct fixture f;
    fixture_init(&f);
    usercache_find(f.c, "alice", f.st, 0, &f.got, &f.g);
    usercache_store(f.c, "alice", f.st, 5, &f.u, f.groups);
    cr_assert(usercache_find(f.c, "alice", f.st, 5 + USER_CACHE_TTL_US - 1, &f.got, &f.g));
    cr_assert_not(usercache_find(f.c, "alice", f.st, 5 + USER_CACHE_TTL_US, &f.got, &f.g));
    hrm_free(f.c);
}

Test(onehost_usercache, the_oldest_entry_makes_room_and_big_group_lists_are_not_kept)
{
    struct fixture f;
    fixture_init(&f);
    usercache_find(f.c, "u0", f.st, 0, &f.got, &f.g);
    for (int i = 0; i <= USER_CACHE_SLOTS; i++) {
        char name[16];
        snprintf(name, sizeof(name), "u%d", i);
        usercache_store(f.c, name, f.st, i, &f.u, f.groups);
    }
    cr_assert_not(usercache_find(f.c, "u0", f.st, 100, &f.got, &f.g), "the oldest stayed");
    for (int i = 1; i <= USER_CACHE_SLOTS; i++) {
        char name[16];
        snprintf(name, sizeof(name), "u%d", i);
        cr_assert(usercache_find(f.c, name, f.st, 100, &f.got, &f.g), "%s went", name);
    }
    f.u.ngroups = USER_CACHE_GROUPS + 1;
    gid_t *many = hrm_calloc(f.u.ngroups, sizeof(*many));
    usercache_store(f.c, "many", f.st, 200, &f.u, many);
    cr_assert_not(usercache_find(f.c, "many", f.st, 201, &f.got, &f.g));
    hrm_free(many);
    hrm_free(f.c);
}

/* Through the agent: the second launch of the same user does not look it up again, the
 * answer is the same, and an unknown user is looked up (and refused) every time. */
Test(onehost_usercache, the_agent_looks_a_user_up_once)
{
    struct agent *a = hrm_calloc(1, sizeof(*a));
    snprintf(a->name, sizeof(a->name), "nodeT");
    struct hrm_error err;
    cr_assert_eq(exec_init(a, &err), 0, "%s", err.text);
    struct passwd *pw = getpwuid(geteuid());
    cr_assert_not_null(pw);
    char name[64];
    snprintf(name, sizeof(name), "%s", pw->pw_name);
    struct task_user u1, u2;
    char why[160] = "";
    cr_assert_eq(exec_user_resolve(a, name, &u1, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(exec_user_resolve(a, name, &u2, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(a->users->lookups, 1);
    cr_assert_eq(u1.change, u2.change);
    cr_assert_not(u2.change, "the agent's own user switches nothing");
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(exec_user_resolve(a, "hrm-no-such-user-x", &u1, why, sizeof(why)), -1);
        cr_assert_str_eq(why, "no such user 'hrm-no-such-user-x' on nodeT");
    }
    cr_assert_eq(a->users->lookups, 1, "a failure counted as a kept lookup");
    exec_fini(a);
    hrm_free(a);
}
