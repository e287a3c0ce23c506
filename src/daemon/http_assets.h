/* The web page's files, embedded in the binary at build time (cmake/embed-assets.cmake from
 * web/), for the master's HTTP server to serve without touching the disk. */
#ifndef HRM_HTTP_ASSETS_H
#define HRM_HTTP_ASSETS_H

#include <stddef.h>

#include "master_http.h" /* struct http_asset, http_asset_find */

/* The generated table (web_assets.c in the build folder): every file of web/ by its path. */
struct http_asset_file {
    const char *path;
    struct http_asset asset;
};
extern const struct http_asset_file http_asset_files[];
extern const size_t http_asset_nfiles;

#endif
