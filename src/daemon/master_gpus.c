/* A node's GPUs and NUMA domains from its registration: checked, kept for `hrm nodes`, and given to the cluster model so the hrm policy's units bind cores by NUMA distance. */
#include <stdio.h>
#include <string.h>

#include "agent_gpu.h"
#include "master_private.h"

/* One gpu_list entry: {index, uuid, name, mem, numa} with index = its position. */
static int check_gpu(const json_t *e, int32_t g, int32_t numa, struct hrm_error *err)
{
    const json_t *index = json_object_get(e, "index"), *uuid = json_object_get(e, "uuid");
    const json_t *name = json_object_get(e, "name"), *mem = json_object_get(e, "mem");
    const json_t *dom = json_object_get(e, "numa");
    if (!json_is_object(e) || !json_is_integer(index) || json_integer_value(index) != g)
        return hrm_errorf(err, -EINVAL, "register: gpu_list[%d]: expected an object with "
                          "index %d", g, g);
    if (!json_is_string(uuid) || json_string_length(uuid) >= AGPU_UUID_MAX ||
        !json_is_string(name) || json_string_length(name) >= AGPU_NAME_MAX)
        return hrm_errorf(err, -EINVAL, "register: gpu_list[%d]: uuid (< %d characters) and "
                          "name (< %d) must be strings", g, AGPU_UUID_MAX, AGPU_NAME_MAX);
    if (!json_is_integer(mem) || json_integer_value(mem) < 0)
        return hrm_errorf(err, -EINVAL, "register: gpu_list[%d]: mem must be bytes >= 0", g);
    if (!json_is_integer(dom) || json_integer_value(dom) < 0 || json_integer_value(dom) >= numa)
        return hrm_errorf(err, -EINVAL, "register: gpu_list[%d]: numa must be a domain of "
                          "0..%d", g, numa - 1);
    return 0;
}

int mgpu_register(struct rnode *rn, const json_t *msg, int32_t cores, int32_t gpus,
                  bool *changed, struct hrm_error *err)
{
    int32_t numa = agpu_model_numa((int32_t)json_integer_value(json_object_get(msg, "numa")),
                                   cores);
    const json_t *list = json_object_get(msg, "gpu_list");
    int8_t gpu_numa[HRM_MAX_GPUS_PER_NODE] = {0};
    /* An agent from before gpu_list: GPUs spread over the domains, as a spec's are. */
    if (list && (!json_is_array(list) || (int32_t)json_array_size(list) != gpus))
        return hrm_errorf(err, -EINVAL, "register: gpu_list must list the %d GPUs", gpus);
    for (int32_t g = 0; list && g < gpus; g++) {
        const json_t *e = json_array_get(list, (size_t)g);
        int rc = check_gpu(e, g, numa, err);
        if (rc < 0)
            return rc;
        gpu_numa[g] = (int8_t)json_integer_value(json_object_get(e, "numa"));
    }
    bool known = list != NULL && gpus > 0;
    *changed = rn->numa != numa || rn->gpu_numa_known != known ||
               memcmp(rn->gpu_numa, gpu_numa, sizeof(gpu_numa)) != 0;
    rn->numa = numa;
    rn->gpu_numa_known = known;
    memcpy(rn->gpu_numa, gpu_numa, sizeof(gpu_numa));
    json_decref(rn->gpu_list);
    rn->gpu_list = known ? json_deep_copy(list) : NULL;
    return 0;
}

void mgpu_node_json(const struct rnode *rn, json_t *o)
{
    json_object_set_new(o, "gpu_mem", json_integer(rn->gpu_mem));
    json_object_set_new(o, "numa", json_integer(rn->numa > 0 ? rn->numa : 1));
    if (rn->gpu_list)
        json_object_set(o, "gpu_list", rn->gpu_list);
}
