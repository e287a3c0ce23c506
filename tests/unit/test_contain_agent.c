/* The agent's containment inputs: the cluster identity in cgroup paths (SHA-256 of master.pub) and the resolution of a task's user before clone. */
#include <criterion/criterion.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent_private.h"
#include "hrm/alloc.h"

Test(contain_cluster_id, is_the_first_12_hex_digits_of_sha256)
{
    char id[CG_CLUSTER_LEN + 1];
    /* FIPS 180-2's test vector: SHA-256("abc") = ba7816bf 8f01cfea ... */
    cg_cluster_id("abc", id);
    cr_assert_str_eq(id, "ba7816bf8f01");
    char other[CG_CLUSTER_LEN + 1];
    cg_cluster_id("abd", other);
    cr_assert_str_neq(id, other);
}

static struct agent *test_agent(void)
{
    struct agent *a = hrm_calloc(1, sizeof(*a));
    snprintf(a->name, sizeof(a->name), "nodeT");
    return a;
}

static void test_agent_free(struct agent *a)
{
    hrm_free(a->groups);
    hrm_free(a);
}

Test(contain_user, none_named_runs_as_the_agent)
{
    struct agent *a = test_agent();
    struct task_user u;
    char why[160] = "";
    cr_assert_eq(exec_user_resolve(a, NULL, &u, why, sizeof(why)), 0);
    cr_assert(!u.change);
    test_agent_free(a);
}

Test(contain_user, the_agents_own_user_keeps_its_credentials)
{
    struct agent *a = test_agent();
    struct passwd *pw = getpwuid(geteuid());
    cr_assert_not_null(pw);
    char name[64];
    snprintf(name, sizeof(name), "%s", pw->pw_name);
    struct task_user u;
    char why[160] = "";
    cr_assert_eq(exec_user_resolve(a, name, &u, why, sizeof(why)), 0, "%s", why);
    cr_assert(!u.change);
    test_agent_free(a);
}

Test(contain_user, an_unknown_user_is_refused_with_the_node_named)
{
    struct agent *a = test_agent();
    struct task_user u;
    char why[160] = "";
    cr_assert_eq(exec_user_resolve(a, "hrm-no-such-user-x", &u, why, sizeof(why)), -1);
    cr_assert_str_eq(why, "no such user 'hrm-no-such-user-x' on nodeT");
    test_agent_free(a);
}

Test(contain_user, another_user_gets_its_ids_and_groups_or_a_reason)
{
    struct passwd *pw = getpwnam("nobody");
    if (!pw || pw->pw_uid == geteuid())
        cr_skip_test("needs a user 'nobody' other than the one running the tests");
    uid_t uid = pw->pw_uid;
    gid_t gid = pw->pw_gid;
    struct agent *a = test_agent();
    struct task_user u;
    char why[160] = "";
    int rc = exec_user_resolve(a, "nobody", &u, why, sizeof(why));
    if (geteuid() != 0) {
        cr_assert_eq(rc, -1);
        cr_assert(strstr(why, "not root"), "%s", why);
    } else {
        cr_assert_eq(rc, 0, "%s", why);
        cr_assert(u.change);
        cr_assert_eq(u.uid, uid);
        cr_assert_eq(u.gid, gid);
        cr_assert_str_eq(u.name, "nobody");
        bool primary = false; /* getgrouplist lists the primary group too */
        for (size_t i = 0; i < u.ngroups; i++)
            primary |= a->groups[i] == gid;
        cr_assert(primary);
    }
    test_agent_free(a);
}
