/* The HTTP API's routes answered by the master's loop: submit, cancel, a job, logs, events. */
#include "master_http_private.h"

enum MHD_Result http_route_submit(struct http_bridge *b, struct MHD_Connection *c,
                                  struct http_request *rq)
{
    (void)b;
    return http_error(c, MHD_HTTP_NOT_IMPLEMENTED, "not_implemented", rq->path, "not yet");
}

enum MHD_Result http_route_loop(struct http_bridge *b, const struct http_server_config *cfg,
                                struct MHD_Connection *c, struct http_request *rq)
{
    (void)b;
    (void)cfg;
    return http_error(c, MHD_HTTP_NOT_IMPLEMENTED, "not_implemented", rq->path, "not yet");
}
