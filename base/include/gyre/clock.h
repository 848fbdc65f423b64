/* The monotonic clock: the one time base of every deadline, timestamp and watchdog in Gyre.
 *
 * Threading: reentrant; call from any thread. */
#ifndef GYRE_CLOCK_H
#define GYRE_CLOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t gy_clock_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_CLOCK_H */
