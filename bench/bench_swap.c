/* gyre-bench section "swap": swapping a streamed cell (one out, one in: ~156 statics and ~8
 * props) additively under the scene barrier against the same swap done with a hard stop/start
 * (join the physics thread, edit the World, start it again: the adapter world rebuilt from all
 * 10,000 statics and 500 props).
 *
 * Both are `gyre soak` runs at 8 cells per second, slow enough that every swap window holds one
 * cell in either mode, so a window is one swap. Per swap is request → the physics thread running
 * again: the soak's swap_us (barrier: wait + mutation window; hard: stop + edit + start). The key
 * swap.hard_vs_barrier is how many times faster the barrier swap is (median against median;
 * target ≥ 100) in the soak's default world of 10,000 statics. A hard restart rebuilds the whole
 * world while a barrier swap touches one cell, so the gap grows with the world: the same pair
 * with 90,000 more level statics gives swap.hard_vs_barrier_100k. */
#include "bench_soak.h"

#include <math.h>

typedef struct swap_run {
    double p50, p99, windows, cells;
} swap_run;

static bool run_one(gy_bench *b, bool hard, bool big, const char *seconds, swap_run *out)
{
    const char *args[12] = {"--seconds", seconds, "--cells", "8"};
    int n = 4;
    if (big) {
        args[n++] = "--level-statics";
        args[n++] = "90000";
    }
    if (hard)
        args[n++] = "--hard";
    args[n] = NULL;
    int code;
    cJSON *r = gy_bench_soak(b, args, &code);
    if (r == NULL) {
        gy_bench_note(b, "gyre soak did not run or wrote no report");
        return false;
    }
    if (code != 0)
        gy_bench_note(b, "gyre soak exited %d (see its report's watchdog and leak fields)", code);
    out->p50 = gy_bench_soak_number(r, "swap_us.p50");
    out->p99 = gy_bench_soak_number(r, "swap_us.p99");
    out->windows = gy_bench_soak_number(r, "windows");
    out->cells = gy_bench_soak_number(r, "cells_swapped");
    cJSON_Delete(r);
    return !isnan(out->p50) && out->p50 > 0 && out->windows > 0;
}

int gy_bench_section_swap(gy_bench *b)
{
    const char *seconds = gy_bench_quick(b) ? "3" : "15";
    swap_run barrier, hard, barrier_big, hard_big;
    if (!run_one(b, false, false, seconds, &barrier) || !run_one(b, true, false, seconds, &hard) ||
        !run_one(b, false, true, seconds, &barrier_big) ||
        !run_one(b, true, true, seconds, &hard_big))
        return 1;
    gy_bench_report(b, "swap.barrier_us", barrier.p50, "us",
                    "one cell out + one in under the barrier, request -> resumed (p50)");
    gy_bench_report(b, "swap.barrier_p99_us", barrier.p99, "us", "the same, p99");
    gy_bench_report(b, "swap.hard_us", hard.p50, "us",
                    "the same swap by hard stop/start, request -> running again (p50)");
    gy_bench_report(b, "swap.hard_p99_us", hard.p99, "us", "the same, p99");
    gy_bench_report(b, "swap.hard_vs_barrier", hard.p50 / barrier.p50, "x",
                    "how many times faster the barrier swap is (target >= 100)");
    gy_bench_report(b, "swap.barrier_100k_us", barrier_big.p50, "us",
                    "barrier swap with 100,000 statics resident (p50)");
    gy_bench_report(b, "swap.hard_100k_us", hard_big.p50, "us",
                    "hard stop/start swap with 100,000 statics resident (p50)");
    gy_bench_report(b, "swap.hard_vs_barrier_100k", hard_big.p50 / barrier_big.p50, "x",
                    "how many times faster, 100,000 statics");
    gy_bench_note(b,
                  "cells per window: barrier %.2f (%.0f windows), hard %.2f (%.0f windows); "
                  "100,000 statics: %.2f (%.0f), %.2f (%.0f)",
                  barrier.cells / barrier.windows, barrier.windows, hard.cells / hard.windows,
                  hard.windows, barrier_big.cells / barrier_big.windows, barrier_big.windows,
                  hard_big.cells / hard_big.windows, hard_big.windows);
    return 0;
}
