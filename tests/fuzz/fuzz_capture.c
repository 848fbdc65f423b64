/* libFuzzer target: the capture reader (gy_capture_read) and the replay's command checks. The
 * checks live in fuzz_entry.c, shared with the plain corpus replay in
 * tests/reliability/test_fuzz_regressions.c. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = gy_fuzz_capture(data, size);
    if (bad != NULL) {
        fprintf(stderr, "invariant broken: %s\n", bad);
        abort();
    }
    return 0;
}
