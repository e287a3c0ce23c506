/* The web page's files are in the binary, byte for byte as in web/, under the paths the page
 * and the browser ask for, with the content types a browser needs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/http_assets.h"

static char *slurp(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/web/%s", HRM_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    char *b = malloc(*len + 1);
    cr_assert_eq(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

static void same_as_file(const char *path, const char *file, const char *type)
{
    const struct http_asset *a = http_asset_find(path);
    cr_assert(a, "%s is not served", path);
    size_t len;
    char *want = slurp(file, &len);
    cr_expect_eq(a->len, len, "%s: %zu bytes served, web/%s has %zu", path, a->len, file, len);
    cr_expect(a->len == len && memcmp(a->data, want, len) == 0, "%s differs from web/%s", path, file);
    cr_expect_eq(a->data[a->len], '\0');
    cr_expect_str_eq(a->content_type, type);
    free(want);
}

Test(web, the_page_and_its_files_are_served)
{
    same_as_file("/", "index.html", "text/html; charset=utf-8");
    same_as_file("/index.html", "index.html", "text/html; charset=utf-8");
    same_as_file("/app.js", "app.js", "text/javascript; charset=utf-8");
    same_as_file("/app.css", "app.css", "text/css; charset=utf-8");
    same_as_file("/favicon.ico", "favicon.svg", "image/svg+xml");
    same_as_file("/app.js?v=2", "app.js", "text/javascript; charset=utf-8");
}

Test(web, other_paths_are_not)
{
    cr_expect_null(http_asset_find("/nope.js"));
    cr_expect_null(http_asset_find("/app.js/"));
    cr_expect_null(http_asset_find("/../web/app.js"));
    cr_expect_null(http_asset_find(""));
    cr_expect_null(http_asset_find(NULL));
    cr_expect_null(http_asset_find("/api/v1/jobs"));
}

Test(web, the_page_refers_only_to_its_own_files)
{
    /* No CDN: every src and href of the page is one of its own paths. */
    const struct http_asset *a = http_asset_find("/");
    cr_assert(a);
    const char *p = a->data;
    int refs = 0;
    while ((p = strstr(p, "=\"")) != NULL) {
        const char *attr = p;
        while (attr > a->data && attr[-1] != ' ')
            attr--;
        p += 2;
        if (strncmp(attr, "src=", 4) != 0 && strncmp(attr, "href=", 5) != 0)
            continue;
        char ref[256];
        size_t n = strcspn(p, "\"");
        cr_assert_lt(n, sizeof(ref));
        memcpy(ref, p, n);
        ref[n] = '\0';
        cr_expect_not_null(http_asset_find(ref), "the page refers to %s, which is not served", ref);
        refs++;
    }
    cr_expect_geq(refs, 3);
}
