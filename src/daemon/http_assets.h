/* The web page's files, embedded in the binary at build time (cmake/embed-assets.cmake from
 * web/), for the master's HTTP server to serve without touching the disk. */
#ifndef HRM_HTTP_ASSETS_H
#define HRM_HTTP_ASSETS_H

#include <stddef.h>

struct http_asset {
    const char *data; /* static; len bytes (also NUL-terminated) */
    size_t len;
    const char *content_type;
};

/* The file served at path ("/", "/app.js", "/app.css", "/favicon.ico"), or NULL: no such
 * file.  The query string, if any, is ignored. */
const struct http_asset *http_asset_find(const char *path);

/* The generated table (web_assets.c in the build folder): every file of web/ by its path. */
struct http_asset_file {
    const char *path;
    struct http_asset asset;
};
extern const struct http_asset_file http_asset_files[];
extern const size_t http_asset_nfiles;

#endif
