/* Tests of the unit parsers and printers (units.h): hand-worked values and rejected forms. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "hrm/units.h"

static int64_t size_of(const char *s)
{
    int64_t v = -1;
    cr_assert_eq(hrm_parse_size(s, &v), 0, "\"%s\" should parse as a size", s);
    return v;
}

static int64_t duration_of(const char *s)
{
    int64_t v = -1;
    cr_assert_eq(hrm_parse_duration(s, &v), 0, "\"%s\" should parse as a duration", s);
    return v;
}

static double rate_of(const char *s)
{
    double v = -1;
    cr_assert_eq(hrm_parse_rate(s, &v), 0, "\"%s\" should parse as a rate", s);
    return v;
}

static int64_t cpu_of(const char *s)
{
    int64_t v = -1;
    cr_assert_eq(hrm_parse_cpu(s, &v), 0, "\"%s\" should parse as cpu", s);
    return v;
}

/* Inputs no parser may accept: signs, words, junk suffixes, NaN/inf, empty, hex, exponents. */
static const char *const garbage[] = {"-1",   "abc", "1x",       "nan", "inf",   "",
                                      "0x10", "1e3", "1..2",     "+1",  "1.2.3", " ",
                                      "--1",  "NaN", "Infinity", ".",   NULL};

Test(units, size_values)
{
    cr_assert_eq(size_of("0"), 0);
    cr_assert_eq(size_of("100"), 100);
    cr_assert_eq(size_of("100B"), 100);
    cr_assert_eq(size_of("4KiB"), 4096);
    cr_assert_eq(size_of("1K"), 1024);
    cr_assert_eq(size_of("1k"), 1024);
    cr_assert_eq(size_of("512M"), 536870912);
    cr_assert_eq(size_of("60M"), 62914560);
    cr_assert_eq(size_of("2G"), 2147483648LL);
    cr_assert_eq(size_of("2GB"), 2147483648LL);
    cr_assert_eq(size_of("1.5T"), 1649267441664LL); /* 1.5 * 2^40 */
    cr_assert_eq(size_of("0.5K"), 512);
    cr_assert_eq(size_of("200000K"), 204800000);
    cr_assert_eq(size_of("1P"), 1125899906842624LL);
}

Test(units, size_rejects)
{
    for (int i = 0; garbage[i]; i++) {
        int64_t v = 42;
        cr_expect_neq(hrm_parse_size(garbage[i], &v), 0, "\"%s\" accepted as size", garbage[i]);
    }
    int64_t v;
    cr_expect_neq(hrm_parse_size("1GG", &v), 0);
    cr_expect_neq(hrm_parse_size("1Gb/s", &v), 0);
    cr_expect_neq(hrm_parse_size("1 G B", &v), 0);
    cr_expect_neq(hrm_parse_size(NULL, &v), 0);
    cr_expect_neq(hrm_parse_size("99999999999P", &v), 0, "overflow must be refused");
}

Test(units, duration_values)
{
    cr_assert_eq(duration_of("0"), 0);
    cr_assert_eq(duration_of("250us"), 250);
    cr_assert_eq(duration_of("100ms"), 100000);
    cr_assert_eq(duration_of("2s"), 2000000);
    cr_assert_eq(duration_of("0.5s"), 500000);
    cr_assert_eq(duration_of("1.5m"), 90000000);
    cr_assert_eq(duration_of("1min"), 60000000);
    cr_assert_eq(duration_of("3h"), 10800000000LL);
    cr_assert_eq(duration_of("66.7s"), 66700000);
}

Test(units, duration_rejects)
{
    for (int i = 0; garbage[i]; i++) {
        int64_t v = 42;
        cr_expect_neq(hrm_parse_duration(garbage[i], &v), 0, "\"%s\" accepted as duration",
                      garbage[i]);
    }
    int64_t v;
    cr_expect_neq(hrm_parse_duration("5", &v), 0, "a bare non-zero number has no unit");
    cr_expect_neq(hrm_parse_duration("-1s", &v), 0);
    cr_expect_neq(hrm_parse_duration("1S", &v), 0, "units are case-sensitive (m is minutes)");
    cr_expect_neq(hrm_parse_duration("1d", &v), 0);
    cr_expect_neq(hrm_parse_duration("infs", &v), 0);
    cr_expect_neq(hrm_parse_duration("0x1s", &v), 0);
}

Test(units, rate_values)
{
    cr_assert_float_eq(rate_of("1Gb/s"), 125e6, 1e-6);
    cr_assert_float_eq(rate_of("10Gb/s"), 1.25e9, 1e-3);
    cr_assert_float_eq(rate_of("1Gbps"), 125e6, 1e-6);
    cr_assert_float_eq(rate_of("160MB/s"), 160e6, 1e-6);
    cr_assert_float_eq(rate_of("100MiB/s"), 104857600.0, 1e-6);
    cr_assert_float_eq(rate_of("8b/s"), 1.0, 1e-12);
    cr_assert_float_eq(rate_of("1.5KB/s"), 1500.0, 1e-9);
}

Test(units, rate_rejects)
{
    for (int i = 0; garbage[i]; i++) {
        double v = 42;
        cr_expect_neq(hrm_parse_rate(garbage[i], &v), 0, "\"%s\" accepted as rate", garbage[i]);
    }
    double v;
    cr_expect_neq(hrm_parse_rate("1Gb", &v), 0, "a rate needs /s");
    cr_expect_neq(hrm_parse_rate("0Gb/s", &v), 0, "a rate must be positive");
    cr_expect_neq(hrm_parse_rate("1gb/s", &v), 0, "b/B case matters");
    cr_expect_neq(hrm_parse_rate("-1Gb/s", &v), 0);
    cr_expect_neq(hrm_parse_rate("100", &v), 0);
}

Test(units, cpu_values)
{
    cr_assert_eq(cpu_of("2"), 2000);
    cr_assert_eq(cpu_of("1.5"), 1500);
    cr_assert_eq(cpu_of("500m"), 500);
    cr_assert_eq(cpu_of("0.001"), 1);
    cr_assert_eq(cpu_of("0"), 0);
    cr_assert_eq(cpu_of("16"), 16000);
}

Test(units, cpu_rejects)
{
    for (int i = 0; garbage[i]; i++) {
        int64_t v = 42;
        cr_expect_neq(hrm_parse_cpu(garbage[i], &v), 0, "\"%s\" accepted as cpu", garbage[i]);
    }
    int64_t v;
    cr_expect_neq(hrm_parse_cpu("2x", &v), 0);
    cr_expect_neq(hrm_parse_cpu("2M", &v), 0);
    cr_expect_neq(hrm_parse_cpu("0x2", &v), 0);
}

Test(units, format)
{
    char buf[32];
    cr_assert_str_eq(hrm_format_size(512, buf, sizeof(buf)), "512B");
    cr_assert_str_eq(hrm_format_size(2147483648LL, buf, sizeof(buf)), "2.0G");
    cr_assert_str_eq(hrm_format_size(1536, buf, sizeof(buf)), "1.5K");
    cr_assert_str_eq(hrm_format_duration(250, buf, sizeof(buf)), "250us");
    cr_assert_str_eq(hrm_format_duration(1500, buf, sizeof(buf)), "1.5ms");
    cr_assert_str_eq(hrm_format_duration(2500000, buf, sizeof(buf)), "2.50s");
    /* Printed sizes parse back to what was printed. */
    int64_t v;
    cr_assert_eq(hrm_parse_size(hrm_format_size(3 * 1048576, buf, sizeof(buf)), &v), 0);
    cr_assert_eq(v, 3 * 1048576);
}
