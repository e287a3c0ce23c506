/* The web page's files, served by the master's HTTP API (GET /, /app.js, /app.css). */
#include <string.h>

#include "master_http.h"

#define ASSET(path, type, text) {path, {text, sizeof(text) - 1, type}}

static const struct {
    const char *path;
    struct http_asset asset;
} assets[] = {
    ASSET("/", "text/html; charset=utf-8",
          "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>hrm</title>\n"
          "<link rel=\"stylesheet\" href=\"/app.css\"></head>\n"
          "<body><h1>hrm</h1><p>The cluster's page. The API is under /api/v1/.</p>\n"
          "<script src=\"/app.js\"></script></body></html>\n"),
    ASSET("/app.js", "text/javascript; charset=utf-8", "\"use strict\";\n"),
    ASSET("/app.css", "text/css; charset=utf-8", "body { font-family: sans-serif; }\n"),
};

const struct http_asset *http_asset_find(const char *path)
{
    for (size_t i = 0; i < sizeof(assets) / sizeof(assets[0]); i++)
        if (strcmp(path, assets[i].path) == 0)
            return &assets[i].asset;
    return NULL;
}
