/* Who a peer is, from its key: the node name an agent key may register as, the account a client
 * key's jobs run as, and whose jobs it may act on. */
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "hrm/log.h"
#include "master_private.h"

static int add_binding(void *arg, const char *key, const char *node)
{
    struct master *m = arg;
    HRM_GROW(m->bindings, m->cap_bindings, m->nbindings + 1);
    struct key_binding *b = &m->bindings[m->nbindings++];
    snprintf(b->key, sizeof(b->key), "%s", key);
    snprintf(b->node, sizeof(b->node), "%s", node);
    return 0;
}

int keys_load_bindings(struct master *m, struct hrm_error *err)
{
    return hrm_store_load_agent_keys(m->store, add_binding, m, err);
}

void keys_free(struct master *m)
{
    hrm_free(m->bindings);
    m->bindings = NULL;
    m->nbindings = m->cap_bindings = 0;
}

static const struct key_binding *binding_of(const struct master *m, const char *key,
                                            const char *node)
{
    for (size_t i = 0; i < m->nbindings; i++)
        if (key ? strcmp(m->bindings[i].key, key) == 0 : strcmp(m->bindings[i].node, node) == 0)
            return &m->bindings[i];
    return NULL;
}

static bool refuse(struct master *m, const struct peer_id *from, const char *name,
                   const char *why)
{
    hrm_log(HRM_LOG_WARNING, "refused a registration as '%s' (key %.8s...): %s", name,
            m->sender.pub, why);
    json_t *e = hrm_wire_error(HRM_WERR_FORBIDDEN, -1, "register as '%s' refused: %s", name, why);
    json_object_set_new(e, "about", json_string("register"));
    master_send(m, from, e);
    return false;
}

/*
 * A key with node=NAME registers as NAME only.  A key without it takes the name of its first
 * registration, recorded in the store, so one shared key cannot serve two nodes and nobody
 * else's key can take over a node's name (and with it its launches and log fetches).
 */
bool keys_may_register(struct master *m, const struct peer_id *from, const char *name)
{
    char why[512];
    const struct hrm_authz_entry *k = &m->sender;
    if (k->bound[0]) {
        if (strcmp(k->bound, name) == 0)
            return true;
        snprintf(why, sizeof(why), "this agent key is bound to node '%s' (node= in "
                 "keys/authorized): run it as --name %s, or give this node its own key with "
                 "hrm keygen --node %s", k->bound, k->bound, name);
        return refuse(m, from, name, why);
    }
    const struct key_binding *mine = binding_of(m, k->pub, NULL);
    if (mine && strcmp(mine->node, name) != 0) {
        snprintf(why, sizeof(why), "this agent key registered first as node '%s' and stays bound "
                 "to it: give each node its own key with hrm keygen --node %s", mine->node, name);
        return refuse(m, from, name, why);
    }
    if (hrm_authz_node_key(m->authz, name)) {
        snprintf(why, sizeof(why), "node '%s' has a key of its own (node= in keys/authorized): "
                 "start it with agent-%s.key", name, name);
        return refuse(m, from, name, why);
    }
    if (mine)
        return true;
    if (binding_of(m, NULL, name)) {
        snprintf(why, sizeof(why), "node '%s' registered first with another agent key: give this "
                 "node its own key with hrm keygen --node %s", name, name);
        return refuse(m, from, name, why);
    }
    struct hrm_error err;
    int rc = hrm_store_bind_agent_key(m->store, k->pub, name, &err);
    if (rc < 0) {
        master_store_failed(m, rc, &err);
        return false;
    }
    add_binding(m, k->pub, name);
    hrm_log(HRM_LOG_NOTICE, "agent key %.8s... has no node= in keys/authorized: bound to node "
            "'%s', its first registration", k->pub, name);
    return true;
}

const char *keys_job_user(struct master *m, const struct peer_id *from, const json_t *desc,
                          long long req)
{
    const char *asked = json_string_value(json_object_get(desc, "user"));
    if (asked && strcmp(asked, m->sender.bound) != 0) {
        master_reply_error(m, from, HRM_WERR_FORBIDDEN, req,
                           "user '%.60s': this client key submits as '%s' (user= in "
                           "keys/authorized); leave 'user' out, or submit with a key of %.60s's",
                           asked, m->sender.bound, asked);
        return NULL;
    }
    return m->sender.bound;
}

bool keys_owns(const struct master *m, const struct rjob *j)
{
    return m->sender.admin || strcmp(m->sender.bound, j->user) == 0;
}

bool keys_may_act_on(struct master *m, const struct peer_id *from, const struct rjob *j,
                     const char *what, long long req)
{
    if (keys_owns(m, j))
        return true;
    master_reply_error(m, from, HRM_WERR_FORBIDDEN, req,
                       "%s job %lld: it is %.60s's, and this client key acts for '%s' only (an "
                       "admin key may: 'admin' on its line in keys/authorized)",
                       what, (long long)j->id, j->user, m->sender.bound);
    hrm_log(HRM_LOG_INFO, "refused to %s job %lld of %.60s for a key of %s", what,
            (long long)j->id, j->user, m->sender.bound);
    return false;
}
