#include <string.h>

#include "adapters.h"

static const gy_backend *const adapters[] = {
    &gy_ode_backend_table,
#if defined(GYRE_HAVE_BULLET)
    &gy_bullet_backend_table,
#endif
};

#define ADAPTER_COUNT ((uint32_t)(sizeof adapters / sizeof adapters[0]))

const gy_backend *gy_backend_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (uint32_t i = 0; i < ADAPTER_COUNT; i++)
        if (strcmp(adapters[i]->name, name) == 0)
            return adapters[i];
    return NULL;
}

uint32_t gy_backend_count(void)
{
    return ADAPTER_COUNT;
}

const gy_backend *gy_backend_at(uint32_t index)
{
    return index < ADAPTER_COUNT ? adapters[index] : NULL;
}
