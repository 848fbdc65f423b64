/* Scene loading for the suites that link the engine: scene JSON written in C strings with single
 * quotes (for readability), loaded with the loader's errors printed. Header-only, so the support
 * library itself does not depend on the engine. */
#ifndef GYRE_TEST_SCENE_H
#define GYRE_TEST_SCENE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gyre/scene.h"
#include "test_support.h"

/* A malloc'd copy of `text` with every ' turned into " (free it). */
static inline char *gy_test_json(const char *text)
{
    size_t n = strlen(text);
    char *json = malloc(n + 1u);
    assert_non_null(json);
    for (size_t i = 0; i <= n; i++)
        json[i] = text[i] == '\'' ? '"' : text[i];
    return json;
}

/* Loads single-quoted scene JSON, resolving files against `dir`, with allocator `a` (NULL: the
 * default). The result goes to *result; with result NULL it must be GY_OK. The loader's errors
 * are printed unless it only ran out of memory (the fault sweeps provoke that on purpose). */
static inline gy_scene *gy_test_load_scene(const char *text, const char *dir, const gy_allocator *a,
                                           gy_result *result)
{
    char *json = gy_test_json(text);
    gy_scene *scene = NULL;
    gy_scene_errors *errors = NULL;
    gy_result r = gy_scene_load_string(json, strlen(json), dir, a, &scene, &errors);
    if (r != GY_OK && r != GY_ERR_OUT_OF_MEMORY && errors != NULL)
        gy_scene_errors_print(errors, stdout, "    scene error: ");
    gy_scene_errors_free(errors);
    free(json);
    if (result != NULL)
        *result = r;
    else
        assert_result(r, GY_OK);
    return scene;
}

/* Loads the scene file `name` in `dir`; it must load. */
static inline gy_scene *gy_test_load_scene_file(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gy_scene *scene = NULL;
    gy_scene_errors *errors = NULL;
    gy_result r = gy_scene_load_file(path, NULL, &scene, &errors);
    if (errors != NULL)
        gy_scene_errors_print(errors, stdout, "    scene error: ");
    gy_scene_errors_free(errors);
    assert_result(r, GY_OK);
    return scene;
}

#endif
