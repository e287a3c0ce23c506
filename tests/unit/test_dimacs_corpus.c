/* Replays the DIMACS reader's fuzz corpus (tests/fuzz/corpus/dimacs) under the test build's
 * ASan + UBSan, so make test checks every input the fuzzer kept without needing clang. */
#include <criterion/criterion.h>
#include <dirent.h>

#include "../fuzz/dimacs_input.c"

#define CORPUS HRM_SOURCE_DIR "/tests/fuzz/corpus/dimacs"

Test(dimacs_corpus, every_input_is_read_without_a_fault)
{
    DIR *d = opendir(CORPUS);
    cr_assert_not_null(d, "no corpus at %s", CORPUS);
    int files = 0, accepted = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", CORPUS, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        uint8_t buf[8192];
        size_t n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        cr_assert_lt(n, sizeof(buf), "%s: larger than a corpus input should be", path);
        accepted += dimacs_fuzz_one(buf, n);
        files++;
    }
    closedir(d);
    /* the seeds are valid problems: a reader that refuses everything fails here */
    cr_assert_geq(files, 5);
    cr_assert_geq(accepted, 4, "%d of %d corpus files accepted", accepted, files);
}
