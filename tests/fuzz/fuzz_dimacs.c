/* libFuzzer target of the DIMACS reader (built by tests/fuzz/run-dimacs, never by make test). */
#include "dimacs_input.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dimacs_fuzz_one(data, size);
    return 0;
}
