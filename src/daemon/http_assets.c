/* The page's files by the paths the browser asks for: "/" is the page itself and
 * "/favicon.ico" its icon (an SVG; browsers go by the content type, not the name). */
#include <string.h>

#include "http_assets.h"

static const struct {
    const char *path, *file;
} aliases[] = {
    {"/", "/index.html"},
    {"/favicon.ico", "/favicon.svg"},
};

const struct http_asset *http_asset_find(const char *path)
{
    if (!path)
        return NULL;
    size_t len = strcspn(path, "?#");
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strlen(aliases[i].path) == len && strncmp(path, aliases[i].path, len) == 0) {
            path = aliases[i].file;
            len = strlen(path);
        }
    for (size_t i = 0; i < http_asset_nfiles; i++)
        if (strlen(http_asset_files[i].path) == len &&
            strncmp(path, http_asset_files[i].path, len) == 0)
            return &http_asset_files[i].asset;
    return NULL;
}
