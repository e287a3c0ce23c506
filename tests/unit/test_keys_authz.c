/* The allow-list: lines with node= and user=, the refusals that name their line, refresh on change, and keygen's additions. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hrm/transport.h"
#include "hrm/wire.h"

static char dir[] = "/tmp/hrm-authz-XXXXXX";
static char path[256];
/* Three valid Z85 public keys (40 characters of the Z85 alphabet). */
#define K1 "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
#define K2 "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
#define K3 "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/authorized", dir);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(keys_authz, .init = setup, .fini = teardown);

static void write_list(const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, 0600);
}

Test(keys_authz, bindings_are_read)
{
    write_list("# comment\n\nagent " K1 " node=n1\nagent " K2 "\nclient " K3 " user=alice\n");
    struct hrm_error err = {{0}};
    struct hrm_authz *a = hrm_authz_load(path, &err);
    cr_assert_not_null(a, "%s", err.text);
    cr_assert_eq(hrm_authz_count(a), 3);
    const struct hrm_authz_entry *e = hrm_authz_find(a, K1);
    cr_assert_not_null(e);
    cr_assert_eq(e->role, HRM_PEER_AGENT);
    cr_assert_str_eq(e->bound, "n1");
    e = hrm_authz_find(a, K2);
    cr_assert_not_null(e);
    cr_assert_str_eq(e->bound, ""); /* unbound: the master binds it at first registration */
    e = hrm_authz_find(a, K3);
    cr_assert_eq(e->role, HRM_PEER_CLIENT);
    cr_assert_str_eq(e->bound, "alice");
    cr_assert_eq(hrm_authz_node_key(a, "n1"), hrm_authz_find(a, K1));
    cr_assert_null(hrm_authz_node_key(a, "alice")); /* a client's account is no node */
    cr_assert_null(hrm_authz_find(a, "0000000000000000000000000000000000000000"));
    hrm_authz_free(a);
}

/* Each bad list fails with its file and line (or the key) in the message. */
static void refused(const char *text, const char *want)
{
    write_list(text);
    struct hrm_error err = {{0}};
    struct hrm_authz *a = hrm_authz_load(path, &err);
    cr_assert_null(a, "accepted: %s", text);
    cr_assert(strstr(err.text, want), "'%s' lacks '%s'", err.text, want);
}

Test(keys_authz, bad_lines_are_named)
{
    refused("agent " K1 "\nclient " K2 "\n", "authorized:2: a client key needs the account");
    refused("client " K2 " node=n1\n", "authorized:1: 'node=n1': expected user=NAME");
    refused("agent " K1 " user=bob\n", "authorized:1: 'user=bob': expected node=NAME");
    refused("agent " K1 " node=../x\n", "authorized:1: 'node=../x'");
    refused("scheduler " K1 " node=a\n", "authorized:1: 'node=a': a scheduler key takes nothing");
    refused("agent " K1 " node=a extra\n", "authorized:1: expected");
    refused("root " K1 "\n", "authorized:1: expected");
    refused("client " K2 " user=bob root\n", "authorized:1: 'root': the only word a client key "
                                            "takes after user=ACCOUNT is admin");
    refused("client " K2 " admin\n", "authorized:1: 'admin': expected user=NAME");
    refused("agent " K1 " node=a admin\n", "authorized:1: expected");
    refused("client " K2 " user=bob admin more\n", "authorized:1: expected");
    refused("agent " K1 "\nagent " K1 " node=b\n", "is listed twice");
    refused("agent " K1 " node=a\nagent " K2 " node=a\n", "node=a is given to two agent keys");
}

Test(keys_authz, writable_list_is_refused)
{
    write_list("agent " K1 "\n");
    chmod(path, 0622);
    struct hrm_error err = {{0}};
    cr_assert_null(hrm_authz_load(path, &err));
    cr_assert(strstr(err.text, "other users may change it"), "%s", err.text);
}

Test(keys_authz, refresh_follows_the_file)
{
    write_list("agent " K1 " node=n1\n");
    struct hrm_error err = {{0}};
    struct hrm_authz *a = hrm_authz_load(path, &err);
    cr_assert_not_null(a);
    cr_assert_eq(hrm_authz_refresh(a, &err), 0); /* unchanged */
    /* A bad version is refused once and the previous list stays. */
    write_list("agent " K1 " node=n1\nclient " K2 "\n");
    cr_assert_lt(hrm_authz_refresh(a, &err), 0);
    cr_assert_eq(hrm_authz_refresh(a, &err), 0);
    cr_assert_not_null(hrm_authz_find(a, K1));
    cr_assert_null(hrm_authz_find(a, K2));
    /* A good one replaces the list: a key removed is no longer found. */
    write_list("client " K2 " user=bob\n");
    cr_assert_eq(hrm_authz_refresh(a, &err), 1, "%s", err.text);
    cr_assert_null(hrm_authz_find(a, K1));
    cr_assert_str_eq(hrm_authz_find(a, K2)->bound, "bob");
    hrm_authz_free(a);
}

Test(keys_authz, keygen_writes_bound_keys)
{
    char keys[300];
    snprintf(keys, sizeof(keys), "%s/keys", dir);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_keys_generate(keys, false, "alice", &err), 0, "%s", err.text);
    cr_assert_eq(hrm_keys_add_node(keys, "n1", false, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_keys_add_client(keys, "bob", "robert", false, false, &err), 0, "%s", err.text);
    cr_assert_eq(hrm_keys_add_node(keys, "n1", false, &err), -EEXIST);
    cr_assert_lt(hrm_keys_add_node(keys, "a/b", false, &err), 0);
    cr_assert_lt(hrm_keys_add_client(keys, "c", "x y", false, false, &err), 0);
    char list[400];
    snprintf(list, sizeof(list), "%s/authorized", keys);
    struct hrm_authz *a = hrm_authz_load(list, &err);
    cr_assert_not_null(a, "%s", err.text);
    cr_assert_eq(hrm_authz_count(a), 5); /* agent, client, scheduler, n1, bob */
    struct hrm_keypair kp;
    cr_assert_eq(hrm_keys_load(keys, "client", true, &kp, &err), 0);
    cr_assert_str_eq(hrm_authz_find(a, kp.pub)->bound, "alice");
    cr_assert(hrm_authz_find(a, kp.pub)->admin, "the default client key acts for every account");
    cr_assert_eq(hrm_keys_load(keys, "agent-n1", false, &kp, &err), 0, "%s", err.text);
    cr_assert_str_eq(hrm_authz_find(a, kp.pub)->bound, "n1");
    cr_assert_eq(hrm_keys_load(keys, "client-bob", true, &kp, &err), 0);
    cr_assert_str_eq(hrm_authz_find(a, kp.pub)->bound, "robert");
    cr_assert_not(hrm_authz_find(a, kp.pub)->admin, "a --client key acts for its account only");
    hrm_authz_free(a);
    cr_assert_eq(hrm_keys_add_client(keys, "ops", "root", true, false, &err), 0, "%s", err.text);
    a = hrm_authz_load(list, &err);
    cr_assert_eq(hrm_keys_load(keys, "client-ops", true, &kp, &err), 0);
    cr_assert(hrm_authz_find(a, kp.pub)->admin, "--admin");
    cr_assert_str_eq(hrm_authz_find(a, kp.pub)->bound, "root");
    hrm_authz_free(a);
    /* --force replaces the node's key and its line: still one line for n1, the new key. */
    cr_assert_eq(hrm_keys_add_node(keys, "n1", true, &err), 0, "%s", err.text);
    a = hrm_authz_load(list, &err);
    cr_assert_eq(hrm_authz_count(a), 6);
    cr_assert_eq(hrm_keys_load(keys, "agent-n1", true, &kp, &err), 0);
    cr_assert_eq(hrm_authz_node_key(a, "n1"), hrm_authz_find(a, kp.pub));
    hrm_authz_free(a);
    /* A secret key others may read is refused. */
    char key[400];
    snprintf(key, sizeof(key), "%s/agent-n1.key", keys);
    chmod(key, 0644);
    cr_assert_eq(hrm_keys_load(keys, "agent-n1", false, &kp, &err), -EPERM);
    cr_assert(strstr(err.text, "chmod 600"), "%s", err.text);
}

Test(keys_authz, open_key_folder_is_refused)
{
    char keys[300];
    snprintf(keys, sizeof(keys), "%s/keys", dir);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_keys_generate(keys, false, "alice", &err), 0, "%s", err.text);
    chmod(keys, 0777); /* anyone may swap the keys or the allow-list */
    struct hrm_keypair kp;
    cr_assert_eq(hrm_keys_load(keys, "client", false, &kp, &err), -EPERM);
    cr_assert(strstr(err.text, "chmod go-w"), "%s", err.text);
    char list[400];
    snprintf(list, sizeof(list), "%s/authorized", keys);
    cr_assert_null(hrm_authz_load(list, &err));
    cr_assert(strstr(err.text, "lets other users replace the keys"), "%s", err.text);
    chmod(keys, 0755); /* others may read the public keys: fine */
    cr_assert_eq(hrm_keys_load(keys, "client", false, &kp, &err), 0, "%s", err.text);
}

Test(keys_authz, adding_keeps_a_hand_edited_list)
{
    char keys[300];
    snprintf(keys, sizeof(keys), "%s/keys", dir);
    struct hrm_error err = {{0}};
    cr_assert_eq(hrm_keys_generate(keys, false, "alice", &err), 0, "%s", err.text);
    char list[400];
    snprintf(list, sizeof(list), "%s/authorized", keys);
    /* A long comment and no newline at the end, as an editor may leave it. */
    FILE *f = fopen(list, "a");
    cr_assert_not_null(f);
    fputc('#', f);
    for (int i = 0; i < 300; i++)
        fputc('x', f);
    fputs("\nagent " K2 " node=n9", f);
    fclose(f);
    cr_assert_eq(hrm_keys_add_node(keys, "n1", false, &err), 0, "%s", err.text);
    struct hrm_authz *a = hrm_authz_load(list, &err);
    cr_assert_not_null(a, "%s", err.text);
    cr_assert_eq(hrm_authz_count(a), 5); /* agent, client, scheduler, n9, n1 */
    cr_assert_not_null(hrm_authz_node_key(a, "n9"));
    cr_assert_not_null(hrm_authz_node_key(a, "n1"));
    hrm_authz_free(a);
}
