/* Spec reader, cluster part: network, racks and node groups into an hrm_cluster. */
#include <stdio.h>
#include <string.h>

#include "hrm/alloc.h"
#include "spec/spec_private.h"

static const char *const cluster_keys[] = {"network", "racks", "nodes", NULL};
static const char *const network_keys[] = {"disk_bw", "rack_bw", "core_bw", "latency", NULL};
static const char *const rack_keys[] = {"name", NULL};
static const char *const group_keys[] = {
    "name",      "count",   "rack", "racks",         "cores",   "cpu_speed", "mem", "disk",
    "disk_type", "disk_bw", "gpus", "cores_per_gpu", "gpu_mem", "net_bw",    "numa", "gpu_numa",
    NULL};
static const char *const disk_kinds[] = {"hdd", "ssd", "nvme", NULL};

#define DEFAULT_LATENCY_US 100

/* Next automatic index per name prefix, so that two groups named "n" give n1..n4, n5..n8. */
struct prefix_next {
    char prefix[HRM_NAME_MAX];
    int64_t next;
};

struct group_ctx {
    struct prefix_next *prefixes;
    size_t nprefixes, cap_prefixes;
    struct spec_names prefix_names;
    bool implicit_rack; /* the cluster lists no racks: every node is in "rack0" */
};

static const char *node_name_of(const void *owner, int32_t id)
{
    const struct hrm_cluster *cl = owner;
    return cl->nodes[id].name;
}

static const char *rack_name_of(const void *owner, int32_t id)
{
    const struct hrm_cluster *cl = owner;
    return cl->racks[id].name;
}

static const char *prefix_name_of(const void *owner, int32_t id)
{
    const struct group_ctx *g = owner;
    return g->prefixes[id].prefix;
}

static int64_t *prefix_counter(struct group_ctx *g, const char *prefix)
{
    int32_t i = spec_names_find(&g->prefix_names, prefix);
    if (i >= 0)
        return &g->prefixes[i].next;
    HRM_GROW(g->prefixes, g->cap_prefixes, g->nprefixes + 1);
    struct prefix_next *p = &g->prefixes[g->nprefixes++];
    snprintf(p->prefix, sizeof(p->prefix), "%s", prefix);
    p->next = 1;
    spec_names_add(&g->prefix_names, (int32_t)g->nprefixes - 1);
    return &p->next;
}

static int parse_network(struct spec_ctx *c, const json_t *obj, struct hrm_netcfg *net)
{
    int rc = spec_object(c, obj, network_keys);
    if (!rc)
        rc = spec_rate(c, obj, "disk_bw", 0, &net->disk_bw);
    if (!rc)
        rc = spec_rate(c, obj, "rack_bw", 0, &net->rack_bw);
    if (!rc)
        rc = spec_rate(c, obj, "core_bw", 0, &net->core_bw);
    if (!rc)
        rc = spec_duration(c, obj, "latency", 0, &net->latency_us);
    return rc;
}

static int parse_rack(struct spec_ctx *c, const json_t *v)
{
    const char *name;
    int rc;
    if (json_is_object(v)) {
        rc = spec_object(c, v, rack_keys);
        if (!rc)
            rc = spec_name(c, v, "name", SPEC_REQUIRED, &name);
    } else {
        rc = spec_name_value(c, v, &name);
    }
    if (rc)
        return rc;
    if (spec_names_find(&c->rack_names, name) >= 0)
        return spec_fail(c, "rack \"%s\" is listed twice", name);
    struct hrm_error e;
    rc = hrm_cluster_add_rack(c->cluster, name, &e);
    if (rc < 0)
        return spec_fail(c, "%s", e.text);
    spec_names_add(&c->rack_names, rc);
    return 0;
}

static int rack_index(struct spec_ctx *c, struct group_ctx *g, const json_t *v, int32_t *out)
{
    const char *name;
    int rc = spec_name_value(c, v, &name);
    if (rc)
        return rc;
    int r = g->implicit_rack ? -1 : spec_names_find(&c->rack_names, name);
    if (r < 0)
        return spec_fail(c, "unknown rack \"%s\"%s", name,
                         g->implicit_rack ? " (the cluster has no \"racks\" list)" : "");
    *out = r;
    return 0;
}

/* The racks a group's nodes go to, round robin; *racks is owned by the caller. */
static int group_racks(struct spec_ctx *c, struct group_ctx *g, const json_t *obj, int32_t **racks,
                       int32_t *nracks)
{
    const json_t *one = json_object_get(obj, "rack");
    const json_t *list = json_object_get(obj, "racks");
    int rc = 0;
    if (one && list)
        return spec_fail(c, "give \"rack\" or \"racks\", not both");
    if (one) {
        *racks = hrm_alloc(sizeof(**racks));
        *nracks = 1;
        size_t mark = spec_push_key(c, "rack");
        rc = rack_index(c, g, one, &(*racks)[0]);
        spec_pop(c, mark);
        return rc;
    }
    if (list) {
        size_t mark = spec_push_key(c, "racks");
        rc = spec_array(c, list, true);
        if (!rc) {
            *nracks = (int32_t)json_array_size(list);
            *racks = hrm_calloc((size_t)*nracks, sizeof(**racks));
        }
        for (int32_t i = 0; !rc && i < *nracks; i++) {
            size_t m2 = spec_push_index(c, (size_t)i);
            rc = rack_index(c, g, json_array_get(list, (size_t)i), &(*racks)[i]);
            spec_pop(c, m2);
        }
        spec_pop(c, mark);
        return rc;
    }
    /* Neither: spread over every rack of the cluster. */
    *nracks = c->cluster->nracks;
    *racks = hrm_calloc((size_t)*nracks, sizeof(**racks));
    for (int32_t i = 0; i < *nracks; i++)
        (*racks)[i] = i;
    return 0;
}

/* "gpu_numa": the NUMA domain of each GPU, one entry per GPU (P0 binding). */
static int parse_gpu_numa(struct spec_ctx *c, const json_t *obj, int64_t gpus, int64_t numa,
                          int8_t *out)
{
    const json_t *v = json_object_get(obj, "gpu_numa");
    if (!v)
        return 0;
    if (gpus == 0)
        return spec_fail_key(c, "gpu_numa", "given but the node has no \"gpus\"");
    size_t mark = spec_push_key(c, "gpu_numa");
    int rc = spec_array(c, v, true);
    if (!rc && (int64_t)json_array_size(v) != gpus)
        rc = spec_fail(c, "lists %zu domains for %lld GPUs: give one per GPU",
                       json_array_size(v), (long long)gpus);
    for (size_t i = 0; !rc && i < json_array_size(v); i++) {
        size_t m2 = spec_push_index(c, i);
        int64_t d = 0;
        rc = spec_int_value(c, json_array_get(v, i), 0, numa - 1, &d);
        out[i] = (int8_t)d;
        spec_pop(c, m2);
    }
    spec_pop(c, mark);
    return rc;
}

static int parse_group(struct spec_ctx *c, struct group_ctx *g, const json_t *obj)
{
    int rc = spec_object(c, obj, group_keys);
    if (rc)
        return rc;
    const char *name = NULL;
    int64_t count = 1, cores = 0, mem = 0, disk = 0, gpus = 0, gpu_mem = 0, per_gpu = 0;
    double speed = 1.0, disk_bw = 0, net_bw = 0;
    int disk_kind = HRM_DISK_HDD;
    if ((rc = spec_name(c, obj, "name", SPEC_REQUIRED, &name)) ||
        (rc = spec_int(c, obj, "count", 0, 1, SPEC_MAX_NODES, &count)) ||
        (rc = spec_int(c, obj, "cores", SPEC_REQUIRED, 1, 1000000, &cores)) ||
        (rc = spec_num(c, obj, "cpu_speed", 0, 0.001, 1000, &speed)) ||
        (rc = spec_size(c, obj, "mem", SPEC_REQUIRED | SPEC_POSITIVE, &mem)) ||
        (rc = spec_size(c, obj, "disk", 0, &disk)) ||
        (rc = spec_choice(c, obj, "disk_type", 0, disk_kinds, &disk_kind)) ||
        (rc = spec_rate(c, obj, "disk_bw", 0, &disk_bw)) ||
        (rc = spec_int(c, obj, "gpus", 0, 0, HRM_MAX_GPUS_PER_NODE, &gpus)) ||
        (rc = spec_rate(c, obj, "net_bw", 0, &net_bw)))
        return rc;
    int64_t numa = 1;
    int8_t gpu_numa[HRM_MAX_GPUS_PER_NODE];
    if ((rc = spec_int(c, obj, "numa", 0, 1, cores < 64 ? cores : 64, &numa)) ||
        (rc = parse_gpu_numa(c, obj, gpus, numa, gpu_numa)))
        return rc;
    bool has_gpu_numa = json_object_get(obj, "gpu_numa") != NULL;
    if (gpus > 0) {
        if ((rc = spec_size(c, obj, "gpu_mem", SPEC_REQUIRED | SPEC_POSITIVE, &gpu_mem)) ||
            (rc = spec_int(c, obj, "cores_per_gpu", 0, 1, cores, &per_gpu)))
            return rc;
        if (per_gpu * gpus > cores)
            return spec_fail_key(c, "cores_per_gpu",
                                 "%d GPUs x %d bound cores exceed the node's %d cores", (int)gpus,
                                 (int)per_gpu, (int)cores);
    } else {
        if (json_object_get(obj, "gpu_mem"))
            return spec_fail_key(c, "gpu_mem", "given but the node has no \"gpus\"");
        if (json_object_get(obj, "cores_per_gpu"))
            return spec_fail_key(c, "cores_per_gpu", "given but the node has no \"gpus\"");
    }
    if ((int64_t)c->cluster->nnodes + count > SPEC_MAX_NODES)
        return spec_fail_key(c, "count", "the cluster would have more than %d nodes",
                             SPEC_MAX_NODES);

    int32_t *racks = NULL, nracks = 0;
    rc = group_racks(c, g, obj, &racks, &nracks);
    if (rc)
        goto out;
    /* count 1 names the node exactly; larger groups number their nodes. */
    int64_t *next = count > 1 ? prefix_counter(g, name) : NULL;
    for (int64_t i = 0; i < count; i++) {
        char node_name[HRM_NAME_MAX + 24];
        if (next)
            snprintf(node_name, sizeof(node_name), "%s%lld", name, (long long)(*next)++);
        else
            snprintf(node_name, sizeof(node_name), "%s", name);
        if (!spec_name_ok(node_name)) {
            rc = spec_fail_key(c, "name", "node name \"%s\" is longer than %d characters",
                               node_name, HRM_NAME_MAX - 1);
            goto out;
        }
        if (spec_names_find(&c->node_names, node_name) >= 0) {
            rc = spec_fail_key(c, "name", "node name \"%s\" is already used", node_name);
            goto out;
        }
        struct hrm_node_desc d = {
            .name = node_name,
            .rack = racks[i % nracks],
            .cores = (int32_t)cores,
            .cpu_speed = speed,
            .mem = mem,
            .disk_size = disk,
            .disk_kind = (enum hrm_disk_kind)disk_kind,
            .disk_bw = disk_bw,
            .gpus = (int32_t)gpus,
            .gpu_mem = gpu_mem,
            .cores_per_gpu = (int32_t)per_gpu,
            .net_bw = net_bw,
            .numa = (int32_t)numa,
            .gpu_numa = has_gpu_numa ? gpu_numa : NULL,
        };
        struct hrm_error e;
        int id = hrm_cluster_add_node(c->cluster, &d, &e);
        if (id < 0) {
            rc = spec_fail(c, "%s", e.text);
            goto out;
        }
        spec_names_add(&c->node_names, id);
    }
out:
    hrm_free(racks);
    return rc;
}

/* Distinct node capacities, for the check that every task fits some node. */
static void build_shapes(struct spec_ctx *c)
{
    const struct hrm_cluster *cl = c->cluster;
    for (int32_t n = 0; n < cl->nnodes; n++) {
        const struct hrm_node *node = &cl->nodes[n];
        struct spec_shape s = {.cap = node->capacity, .gpu_mem_each = 0};
        if (node->gpus > 0)
            s.gpu_mem_each = cl->units[node->unit_first].gpu_mem;
        bool seen = false;
        /* Nodes of a group are alike: compare with the newest shapes first. */
        for (int32_t i = c->nshapes - 1; i >= 0 && !seen; i--)
            seen = memcmp(&c->shapes[i], &s, sizeof(s)) == 0;
        if (!seen) {
            HRM_GROW(c->shapes, c->cap_shapes, (size_t)c->nshapes + 1);
            c->shapes[c->nshapes++] = s;
        }
    }
}

/* Sums the groups' counts first, so that too large a cluster fails before any is built. */
static int precount(struct spec_ctx *c, const json_t *groups)
{
    int64_t total = 0;
    for (size_t i = 0; i < json_array_size(groups); i++) {
        const json_t *n = json_object_get(json_array_get(groups, i), "count");
        total +=
            json_is_integer(n) && json_integer_value(n) > 0
                ? (json_integer_value(n) < SPEC_MAX_NODES ? json_integer_value(n) : SPEC_MAX_NODES)
                : 1;
        if (total > SPEC_MAX_NODES) {
            size_t mark = spec_push_index(c, i);
            int rc = spec_fail_key(c, "count", "the cluster would have more than %d nodes",
                                   SPEC_MAX_NODES);
            spec_pop(c, mark);
            return rc;
        }
    }
    return 0;
}

int spec_cluster_parse(struct spec_ctx *c, const json_t *obj)
{
    int rc = spec_object(c, obj, cluster_keys);
    if (rc)
        return rc;
    struct hrm_netcfg net = {.latency_us = DEFAULT_LATENCY_US};
    const json_t *v = json_object_get(obj, "network");
    if (v) {
        size_t mark = spec_push_key(c, "network");
        rc = parse_network(c, v, &net);
        spec_pop(c, mark);
        if (rc)
            return rc;
    }
    c->cluster = hrm_cluster_new(&net);
    spec_names_init(&c->node_names, node_name_of, c->cluster);
    spec_names_init(&c->rack_names, rack_name_of, c->cluster);

    struct group_ctx g = {0};
    spec_names_init(&g.prefix_names, prefix_name_of, &g);
    v = json_object_get(obj, "racks");
    if (v) {
        size_t mark = spec_push_key(c, "racks");
        rc = spec_array(c, v, true);
        if (!rc && json_array_size(v) > SPEC_MAX_RACKS)
            rc = spec_fail(c, "more than %d racks", SPEC_MAX_RACKS);
        for (size_t i = 0; !rc && i < json_array_size(v); i++) {
            size_t m2 = spec_push_index(c, i);
            rc = parse_rack(c, json_array_get(v, i));
            spec_pop(c, m2);
        }
        spec_pop(c, mark);
        if (rc)
            goto out;
    } else {
        g.implicit_rack = true;
        hrm_cluster_add_rack(c->cluster, "rack0", NULL);
    }

    v = json_object_get(obj, "nodes");
    if (!v) {
        rc = spec_fail(c, "missing key \"nodes\"");
        goto out;
    }
    size_t mark = spec_push_key(c, "nodes");
    rc = spec_array(c, v, true);
    if (!rc)
        rc = precount(c, v);
    for (size_t i = 0; !rc && i < json_array_size(v); i++) {
        size_t m2 = spec_push_index(c, i);
        rc = parse_group(c, &g, json_array_get(v, i));
        spec_pop(c, m2);
    }
    spec_pop(c, mark);
    if (rc)
        goto out;
    for (int32_t r = 0; r < c->cluster->nracks && !rc; r++)
        if (c->cluster->racks[r].nnodes == 0)
            rc = spec_fail_key(c, "racks", "rack \"%s\" has no node", c->cluster->racks[r].name);
    if (!rc)
        build_shapes(c);
out:
    spec_names_fini(&g.prefix_names);
    hrm_free(g.prefixes);
    return rc;
}
