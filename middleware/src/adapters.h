/* The adapter tables compiled into this build. Private to middleware/: only the registry names
 * adapters; everything above it looks them up by name. */
#ifndef GYRE_MIDDLEWARE_ADAPTERS_H
#define GYRE_MIDDLEWARE_ADAPTERS_H

#include "gyre/backend/backend.h"

extern const gy_backend gy_ode_backend_table;
#if defined(GYRE_HAVE_BULLET)
extern const gy_backend gy_bullet_backend_table;
#endif

#endif
