/* Private to gyre-bench's streaming and swap sections: running `gyre soak` (engine/cli/soak.c) as
 * a child process and reading numbers from its report, so every number these sections print is
 * one a `gyre soak` command line reproduces. */
#ifndef GYRE_BENCH_SOAK_H
#define GYRE_BENCH_SOAK_H

#include <cjson/cJSON.h>

#include "bench.h"

/* Runs `gyre soak SCENE <args...> --quiet --report TMP` (args NULL-terminated, at most 30) and
 * returns the parsed report (cJSON_Delete it), or NULL when gyre could not run or wrote no
 * report. Notes the command line under the section. A soak that ran but failed a check (exit 1)
 * still returns its report; *exit_code receives the exit status. */
cJSON *gy_bench_soak(gy_bench *b, const char *const *args, int *exit_code);

/* The number at "a.b.c" in a report, or NAN. */
double gy_bench_soak_number(const cJSON *report, const char *path);

#endif
