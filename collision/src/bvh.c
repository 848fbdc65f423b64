#include "bvh.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "gyre/math.h"

#define SAH_BINS GY_BVH_BINS
/* Below this depth splits stop looking for the best plane and halve the range instead, which caps
 * the depth at SAH_DEPTH_LIMIT + 31 < GY_BVH_MAX_DEPTH for any item count. */
#define SAH_DEPTH_LIMIT 32

/* Outward rounding to float, on the bits (the libm call, nextafterf, was a fifth of the cost of
 * moving a query-snapshot entry) and without branches: whether a bound needs the step is a coin
 * toss that changes every tick, and the mispredicted branches cost three times the arithmetic
 * (≈ 70 against ≈ 25 ns per box). The result is nextafterf((float)v, ∓INFINITY) when (float)v
 * lies beyond v, else (float)v. */
static inline float round_down(double v)
{
    if (v >= (double)FLT_MAX)
        return FLT_MAX;
    if (v < -(double)FLT_MAX)
        return -INFINITY;
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t need = (double)f > v;
    uint32_t zero = (u & 0x7fffffffu) == 0;
    /* Toward -inf the magnitude grows for negatives and zeros (a zero becomes the smallest
     * negative denormal) and shrinks for positives. */
    uint32_t grow = (u >> 31) | zero;
    u |= (need & zero) << 31;
    u += (grow * 2u - 1u) & (0u - need);
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float round_up(double v)
{
    if (v > (double)FLT_MAX)
        return INFINITY;
    if (v <= -(double)FLT_MAX)
        return -FLT_MAX;
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t need = (double)f < v;
    uint32_t zero = (u & 0x7fffffffu) == 0;
    /* Toward +inf the magnitude grows for positives and zeros (a zero becomes the smallest
     * positive denormal) and shrinks for negatives. */
    uint32_t grow = ((u >> 31) ^ 1u) | zero;
    u &= ~((need & zero) << 31);
    u += (grow * 2u - 1u) & (0u - need);
    memcpy(&f, &u, sizeof f);
    return f;
}

gy_bvh_box gy_bvh_box_from(gy_vec3 min, gy_vec3 max)
{
    gy_bvh_box b = {{round_down(min.x), round_down(min.y), round_down(min.z)},
                    {round_up(max.x), round_up(max.y), round_up(max.z)}};
    return b;
}

double gy_bvh_box_ray(const gy_bvh_box *box, gy_vec3 origin, gy_vec3 inv_dir, double t_max)
{
    const double o[3] = {origin.x, origin.y, origin.z};
    const double inv[3] = {inv_dir.x, inv_dir.y, inv_dir.z};
    double lo = 0.0, hi = t_max;
    for (int i = 0; i < 3; i++) {
        double t1 = ((double)box->min[i] - o[i]) * inv[i];
        double t2 = ((double)box->max[i] - o[i]) * inv[i];
        /* The slope's sign orders the pair, and a NaN (0 · ±inf: a ray parallel to this slab
         * with its origin on a face) fails both comparisons and so constrains nothing: touching
         * counts as inside. */
        double near = signbit(inv[i]) ? t2 : t1, far = signbit(inv[i]) ? t1 : t2;
        if (near > lo)
            lo = near;
        if (far < hi)
            hi = far;
    }
    return lo <= hi ? lo : -1.0;
}

gy_vec3 gy_bvh_ray_inverse(gy_vec3 dir)
{
    return gy_v3(1.0 / dir.x, 1.0 / dir.y, 1.0 / dir.z);
}

void gy_bvh_init(gy_bvh *bvh, bool track_leaves)
{
    memset(bvh, 0, sizeof *bvh);
    bvh->track_leaves = track_leaves;
}

void gy_bvh_fini(gy_bvh *bvh, const gy_allocator *a)
{
    gy_free(a, bvh->nodes, (size_t)bvh->node_capacity * sizeof *bvh->nodes);
    gy_free(a, bvh->leaf_of, (size_t)bvh->leaf_of_capacity * sizeof *bvh->leaf_of);
    struct gy_bvh_editor *e = bvh->editor;
    gy_bvh_init(bvh, bvh->track_leaves);
    bvh->editor = e;
}

void gy_bvh_builder_fini(gy_bvh_builder *b, const gy_allocator *a)
{
    gy_free(a, b->items, (size_t)b->items_capacity * sizeof *b->items);
    gy_free(a, b->boxes, (size_t)b->boxes_capacity * sizeof *b->boxes);
    memset(b, 0, sizeof *b);
}

/* A new block of n bytes holding the first `old` bytes of `from`, zero after them (NULL when out of
 * memory; `from` is left for the caller to free once every block of the resize is in hand). */
static uint8_t *grown_bytes(const gy_allocator *a, const uint8_t *from, uint32_t old, uint32_t n)
{
    uint8_t *p = gy_alloc(a, n);
    if (p == NULL)
        return NULL;
    if (old)
        memcpy(p, from, old);
    memset(p + old, 0, n - old);
    return p;
}

/* Replaces the editor's logs (dirty bits and per-mirror lists) with arrays of n entries, keeping
 * what is logged; old is the size of the current ones (0: none). */
static gy_result resize_logs(gy_bvh_editor *e, const gy_allocator *a, uint32_t old, uint32_t n)
{
    uint8_t *dirty = grown_bytes(a, e->dirty, old, n);
    uint32_t *lists[GY_BVH_MIRRORS];
    bool ok = dirty != NULL;
    for (unsigned m = 0; m < GY_BVH_MIRRORS; m++) {
        lists[m] = gy_alloc(a, (size_t)n * sizeof *lists[m]);
        ok = ok && lists[m] != NULL;
    }
    if (!ok) {
        gy_free(a, dirty, n);
        for (unsigned m = 0; m < GY_BVH_MIRRORS; m++)
            gy_free(a, lists[m], (size_t)n * sizeof *lists[m]);
        return GY_ERR_OUT_OF_MEMORY;
    }
    gy_free(a, e->dirty, old);
    e->dirty = dirty;
    for (unsigned m = 0; m < GY_BVH_MIRRORS; m++) {
        if (old)
            memcpy(lists[m], e->lists[m], (size_t)e->counts[m] * sizeof *lists[m]);
        gy_free(a, e->lists[m], (size_t)old * sizeof *e->lists[m]);
        e->lists[m] = lists[m];
    }
    return GY_OK;
}

/* The editor's per-node arrays follow the node array's capacity. */
static gy_result reserve_editor(gy_bvh_editor *e, const gy_allocator *a, uint32_t nodes)
{
    if (nodes <= e->capacity)
        return GY_OK;
    uint64_t cap = gy_capacity_for(e->capacity, 64u, nodes);
    if (cap > GY_BVH_MAX_ITEMS)
        return GY_ERR_OUT_OF_MEMORY;
    uint32_t old = e->capacity, n = (uint32_t)cap;
    uint8_t *height = grown_bytes(a, e->height, old, n);
    if (height == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    if (e->logging && resize_logs(e, a, old, n) != GY_OK) {
        gy_free(a, height, n);
        return GY_ERR_OUT_OF_MEMORY;
    }
    gy_free(a, e->height, old);
    e->height = height;
    e->capacity = n;
    return GY_OK;
}

gy_result gy_bvh_reserve_nodes(gy_bvh *bvh, const gy_allocator *a, uint32_t nodes)
{
    if (nodes <= bvh->node_capacity)
        return GY_OK;
    gy_bvh_node *p = gy_realloc(a, bvh->nodes, (size_t)bvh->node_capacity * sizeof *bvh->nodes,
                                (size_t)nodes * sizeof *bvh->nodes);
    if (p == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    bvh->nodes = p;
    bvh->node_capacity = nodes;
    return GY_OK;
}

static gy_result reserve_tree(gy_bvh *bvh, const gy_allocator *a, uint32_t nodes, uint32_t items)
{
    gy_result r =
        gy_array_reserve(a, (void **)&bvh->nodes, &bvh->node_capacity, nodes, sizeof *bvh->nodes);
    if (r == GY_OK && bvh->track_leaves)
        r = gy_array_reserve(a, (void **)&bvh->leaf_of, &bvh->leaf_of_capacity, items,
                             sizeof *bvh->leaf_of);
    if (r == GY_OK && bvh->editor != NULL)
        r = reserve_editor(bvh->editor, a, bvh->node_capacity);
    return r;
}

/* Logs node n as changed for every mirror (once per mirror until it catches up). */
static void log_node(gy_bvh *bvh, uint32_t n)
{
    gy_bvh_editor *e = bvh->editor;
    if (e == NULL || !e->logging)
        return;
    uint8_t seen = e->dirty[n];
    for (unsigned m = 0; m < GY_BVH_MIRRORS; m++)
        if (!(seen & (1u << m)))
            e->lists[m][e->counts[m]++] = n;
    e->dirty[n] = (uint8_t)((1u << GY_BVH_MIRRORS) - 1u);
}

static void editor_forget_all(gy_bvh_editor *e)
{
    for (unsigned m = 0; m < GY_BVH_MIRRORS; m++)
        gy_bvh_editor_forget(e, m);
}

static double box_area(const gy_bvh_box *b)
{
    double dx = (double)b->max[0] - b->min[0];
    double dy = (double)b->max[1] - b->min[1];
    double dz = (double)b->max[2] - b->min[2];
    return 2.0 * (dx * dy + dy * dz + dz * dx);
}

static double centroid(const gy_bvh_box *b, int axis)
{
    return 0.5 * ((double)b->min[axis] + (double)b->max[axis]);
}

static const gy_bvh_box empty_box = {{INFINITY, INFINITY, INFINITY},
                                     {-INFINITY, -INFINITY, -INFINITY}};

static int bin_of(double c, double cmin, double scale)
{
    /* Clamped before the conversion: a box beyond float range makes t infinite or NaN, and
     * converting either to int is undefined. NaN fails the first test and lands in bin 0. */
    double t = (c - cmin) * scale;
    if (!(t > 0.0))
        return 0;
    return t >= (double)SAH_BINS ? SAH_BINS - 1 : (int)t;
}

/* The builder works on copies of the items and their boxes in work order, so every pass over a
 * range reads memory sequentially; partitioning swaps both. */
typedef struct work_set {
    uint32_t *items;
    gy_bvh_box *boxes;
} work_set;

static void swap_work(work_set *w, uint32_t i, uint32_t j)
{
    uint32_t t = w->items[i];
    w->items[i] = w->items[j];
    w->items[j] = t;
    gy_bvh_box b = w->boxes[i];
    w->boxes[i] = w->boxes[j];
    w->boxes[j] = b;
}

static void push_task(gy_bvh_build_state *s, uint32_t node, uint32_t begin, uint32_t end,
                      uint32_t depth)
{
    assert(s->top < GY_BVH_MAX_DEPTH + 1u);
    s->stack[s->top][0] = node;
    s->stack[s->top][1] = begin;
    s->stack[s->top][2] = end;
    s->stack[s->top][3] = depth;
    s->top++;
}

/* Ends the task being split at `split` (strictly inside its range): its node gets the range's
 * bounds and two children, whose tasks go on the stack right half first, so depth-first order
 * never holds more than one pending task per level. */
static void split_task(gy_bvh *bvh, gy_bvh_build_state *s, uint32_t split)
{
    gy_bvh_node *node = &bvh->nodes[s->node];
    node->box = s->all;
    uint32_t left = bvh->node_count;
    bvh->node_count += 2u;
    node->link = left;
    bvh->nodes[left].parent = s->node;
    bvh->nodes[left + 1u].parent = s->node;
    push_task(s, left + 1u, split, s->end, s->depth + 1u);
    push_task(s, left, s->begin, split, s->depth + 1u);
    s->pass = 0;
}

/* How many of the current pass's items this slice may still visit. */
static uint32_t pass_stop(const gy_bvh_build_state *s, uint64_t left)
{
    uint64_t rest = (uint64_t)(s->end - s->cursor);
    return rest > left ? s->cursor + (uint32_t)left : s->end;
}

/* After the bounds pass: the split plane is searched on the widest axis of the centroids only
 * (binning all three costs three times as much and rarely finds a better plane). */
static void after_bounds(gy_bvh *bvh, gy_bvh_build_state *s)
{
    uint32_t mid = s->begin + (s->end - s->begin) / 2u;
    if (s->depth >= SAH_DEPTH_LIMIT) {
        split_task(bvh, s, mid);
        return;
    }
    int widest = 0;
    for (int a = 1; a < 3; a++)
        if (s->cmax[a] - s->cmin[a] > s->cmax[widest] - s->cmin[widest])
            widest = a;
    double extent = s->cmax[widest] - s->cmin[widest];
    /* Every centroid coincides (any split is as good as another), or the boxes lie beyond float
     * range and cannot be binned. */
    if (!(extent > 0.0 && extent <= DBL_MAX)) {
        split_task(bvh, s, mid);
        return;
    }
    s->axis = widest;
    s->scale = (double)SAH_BINS / extent;
    for (int k = 0; k < SAH_BINS; k++) {
        s->bins[k].box = empty_box;
        s->bins[k].count = 0;
    }
    s->cursor = s->begin;
    s->pass = 2;
}

/* After the binning pass: the cheapest plane by surface area, or the middle when every cost was
 * NaN (infinite boxes). */
static void after_bins(gy_bvh *bvh, gy_bvh_build_state *s)
{
    double right_cost[SAH_BINS];
    gy_bvh_box acc = empty_box;
    uint32_t n = 0;
    for (int k = SAH_BINS - 1; k > 0; k--) {
        acc = gy_bvh_box_union(acc, s->bins[k].box);
        n += s->bins[k].count;
        right_cost[k - 1] = n ? box_area(&acc) * n : 0.0;
    }
    acc = empty_box;
    n = 0;
    double best_cost = INFINITY;
    int best = -1;
    for (int k = 0; k < SAH_BINS - 1; k++) {
        acc = gy_bvh_box_union(acc, s->bins[k].box);
        n += s->bins[k].count;
        double cost = (n ? box_area(&acc) * n : 0.0) + right_cost[k];
        if (cost < best_cost) {
            best_cost = cost;
            best = k;
        }
    }
    if (best < 0) {
        split_task(bvh, s, s->begin + (s->end - s->begin) / 2u);
        return;
    }
    s->split_bin = best;
    s->lo = s->begin;
    s->hi = s->end;
    s->pass = 3;
}

gy_result gy_bvh_build_begin(gy_bvh *bvh, gy_bvh_builder *builder, const gy_allocator *a,
                             const uint32_t *items, uint32_t count, const gy_bvh_box *boxes,
                             uint32_t item_limit, gy_bvh_build_state *state)
{
    memset(state, 0, sizeof *state);
    bvh->node_count = 0;
    bvh->depth = 0;
    bvh->ordered = true;
    if (bvh->editor != NULL) {
        bvh->editor->free_head = GY_BVH_NONE;
        editor_forget_all(bvh->editor);
    }
    if (count == 0)
        return GY_OK;
    uint32_t boxes_capacity = builder->boxes_capacity;
    if (count > GY_BVH_MAX_ITEMS / 2u ||
        reserve_tree(bvh, a, 2u * count - 1u, item_limit) != GY_OK ||
        gy_array_reserve(a, (void **)&builder->items, &builder->items_capacity, count,
                         sizeof *builder->items) != GY_OK ||
        gy_array_reserve(a, (void **)&builder->boxes, &boxes_capacity, count,
                         sizeof *builder->boxes) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    builder->boxes_capacity = boxes_capacity;
    for (uint32_t i = 0; items != NULL && i < count; i++) {
        builder->items[i] = items[i];
        builder->boxes[i] = boxes[items[i]];
    }
    state->count = count;
    state->item_limit = item_limit;
    push_task(state, 0, 0, count, 0);
    bvh->nodes[0].parent = GY_BVH_NONE;
    bvh->node_count = 1;
    return GY_OK;
}

/* Node heights leaves up, for trees edited in place: children always come after their parent. */
static void build_heights(gy_bvh *bvh)
{
    uint8_t *h = bvh->editor->height;
    for (uint32_t i = bvh->node_count; i-- > 0;) {
        uint32_t link = bvh->nodes[i].link;
        h[i] = (link & GY_BVH_LEAF_BIT)
                   ? 0u
                   : (uint8_t)(1u + (h[link] > h[link + 1u] ? h[link] : h[link + 1u]));
    }
}

bool gy_bvh_build_run(gy_bvh *bvh, gy_bvh_builder *builder, gy_bvh_build_state *s, uint64_t units,
                      uint64_t *done_units)
{
    work_set w = {builder->items, builder->boxes};
    uint64_t used = 0;
    bool finished = false;
    while (used < units) {
        if (s->pass == 0) {
            if (s->top == 0) {
                finished = true;
                break;
            }
            s->top--;
            s->node = s->stack[s->top][0];
            s->begin = s->stack[s->top][1];
            s->end = s->stack[s->top][2];
            s->depth = s->stack[s->top][3];
            if (s->depth > bvh->depth)
                bvh->depth = s->depth;
            if (s->end - s->begin == 1) {
                uint32_t item = w.items[s->begin];
                assert(item < GY_BVH_MAX_ITEMS && (!bvh->track_leaves || item < s->item_limit));
                gy_bvh_node *node = &bvh->nodes[s->node];
                node->box = w.boxes[s->begin];
                node->link = GY_BVH_LEAF_BIT | item;
                if (bvh->track_leaves)
                    bvh->leaf_of[item] = s->node;
                used++;
                continue;
            }
            for (int a = 0; a < 3; a++) {
                s->cmin[a] = INFINITY;
                s->cmax[a] = -INFINITY;
            }
            s->all = empty_box;
            s->cursor = s->begin;
            s->pass = 1;
        }
        if (s->pass == 1) {
            uint32_t stop = pass_stop(s, units - used);
            for (uint32_t i = s->cursor; i < stop; i++) {
                s->all = gy_bvh_box_union(s->all, w.boxes[i]);
                for (int a = 0; a < 3; a++) {
                    double c = centroid(&w.boxes[i], a);
                    s->cmin[a] = c < s->cmin[a] ? c : s->cmin[a];
                    s->cmax[a] = c > s->cmax[a] ? c : s->cmax[a];
                }
            }
            used += stop - s->cursor;
            s->cursor = stop;
            if (s->cursor < s->end)
                break;
            after_bounds(bvh, s);
            continue;
        }
        if (s->pass == 2) {
            uint32_t stop = pass_stop(s, units - used);
            for (uint32_t i = s->cursor; i < stop; i++) {
                const gy_bvh_box *b = &w.boxes[i];
                int k = bin_of(centroid(b, s->axis), s->cmin[s->axis], s->scale);
                s->bins[k].box = gy_bvh_box_union(s->bins[k].box, *b);
                s->bins[k].count++;
            }
            used += stop - s->cursor;
            s->cursor = stop;
            if (s->cursor < s->end)
                break;
            after_bins(bvh, s);
            continue;
        }
        /* pass 3: partition around the chosen plane */
        while (s->lo < s->hi && used < units) {
            if (bin_of(centroid(&w.boxes[s->lo], s->axis), s->cmin[s->axis], s->scale) <=
                s->split_bin)
                s->lo++;
            else
                swap_work(&w, s->lo, --s->hi);
            used++;
        }
        if (s->lo < s->hi)
            break;
        uint32_t mid = s->begin + (s->end - s->begin) / 2u;
        split_task(bvh, s, (s->lo == s->begin || s->lo == s->end) ? mid : s->lo);
    }
    if (!finished && s->pass == 0 && s->top == 0)
        finished = true;
    if (done_units != NULL)
        *done_units += used;
    if (finished && s->count > 0) {
        assert(bvh->node_count == 2u * s->count - 1u && bvh->depth < GY_BVH_MAX_DEPTH);
        if (bvh->editor != NULL)
            build_heights(bvh);
        s->count = 0; /* heights once */
    }
    return finished;
}

gy_result gy_bvh_build(gy_bvh *bvh, gy_bvh_builder *builder, const gy_allocator *a,
                       const uint32_t *items, uint32_t count, const gy_bvh_box *boxes,
                       uint32_t item_limit)
{
    gy_bvh_build_state state;
    gy_result r = gy_bvh_build_begin(bvh, builder, a, items, count, boxes, item_limit, &state);
    if (r != GY_OK)
        return r;
    gy_bvh_build_run(bvh, builder, &state, UINT64_MAX, NULL);
    return GY_OK;
}

gy_result gy_bvh_copy(gy_bvh *dst, const gy_bvh *src, const gy_allocator *a, uint32_t item_limit)
{
    assert(!src->track_leaves || dst->track_leaves);
    dst->node_count = 0;
    dst->depth = 0;
    if (src->node_count == 0)
        return GY_OK;
    if (reserve_tree(dst, a, src->node_count, item_limit) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    memcpy(dst->nodes, src->nodes, (size_t)src->node_count * sizeof *dst->nodes);
    dst->node_count = src->node_count;
    dst->depth = src->depth;
    dst->ordered = src->ordered;
    if (dst->track_leaves) {
        /* Rebuilt from the leaves rather than copied: the map spans every item number, the tree
         * may hold only a few of them. */
        for (uint32_t i = 0; i < dst->node_count; i++) {
            uint32_t link = dst->nodes[i].link;
            if ((link & GY_BVH_LEAF_BIT) && dst->nodes[i].parent != GY_BVH_FREE)
                dst->leaf_of[link & ~GY_BVH_LEAF_BIT] = i;
        }
    }
    return GY_OK;
}

void gy_bvh_copy_bounds(gy_bvh *dst, const gy_bvh *src)
{
    assert(dst->node_count == src->node_count && dst->editor == NULL);
    if (src->node_count > 0)
        memcpy(dst->nodes, src->nodes, (size_t)src->node_count * sizeof *dst->nodes);
}

uint32_t gy_bvh_refit_item(gy_bvh *bvh, uint32_t item, gy_bvh_box box)
{
    assert(bvh->track_leaves && item < bvh->leaf_of_capacity);
    uint32_t n = bvh->leaf_of[item];
    assert(n < bvh->node_count && bvh->nodes[n].link == (GY_BVH_LEAF_BIT | item));
    uint32_t changed = 0;
    if (!gy_bvh_box_equal(&bvh->nodes[n].box, &box)) {
        bvh->nodes[n].box = box;
        log_node(bvh, n);
        changed++;
    }
    for (uint32_t p = bvh->nodes[n].parent; p != GY_BVH_NONE; p = bvh->nodes[p].parent) {
        uint32_t c = bvh->nodes[p].link;
        gy_bvh_box u = gy_bvh_box_union(bvh->nodes[c].box, bvh->nodes[c + 1u].box);
        if (gy_bvh_box_equal(&u, &bvh->nodes[p].box))
            break;
        bvh->nodes[p].box = u;
        log_node(bvh, p);
        changed++;
    }
    return changed;
}

/* Sets node i's box: its item's for a leaf, its children's union otherwise; logs a change. */
static void refit_node(gy_bvh *bvh, uint32_t i, const gy_bvh_box *boxes, const uint32_t *index)
{
    gy_bvh_node *n = &bvh->nodes[i];
    uint32_t item = n->link & ~GY_BVH_LEAF_BIT;
    gy_bvh_box b = (n->link & GY_BVH_LEAF_BIT)
                       ? boxes[index != NULL ? index[item] : item]
                       : gy_bvh_box_union(bvh->nodes[n->link].box, bvh->nodes[n->link + 1u].box);
    if (bvh->editor != NULL && gy_bvh_box_equal(&b, &n->box))
        return;
    n->box = b;
    log_node(bvh, i);
}

uint32_t gy_bvh_refit_all(gy_bvh *bvh, const gy_bvh_box *boxes)
{
    return gy_bvh_refit_all_indexed(bvh, boxes, NULL);
}

uint32_t gy_bvh_refit_all_indexed(gy_bvh *bvh, const gy_bvh_box *boxes, const uint32_t *index)
{
    if (bvh->ordered) {
        for (uint32_t i = bvh->node_count; i-- > 0;)
            refit_node(bvh, i, boxes, index);
        return bvh->node_count;
    }
    if (bvh->node_count == 0)
        return 0;
    /* Post-order through the parent links (no stack): down the first children to a leaf, then
     * up past every node whose second subtree is done. */
    uint32_t n = 0;
    for (;;) {
        while (!(bvh->nodes[n].link & GY_BVH_LEAF_BIT))
            n = bvh->nodes[n].link;
        refit_node(bvh, n, boxes, index);
        for (;;) {
            if (n == 0)
                return bvh->node_count;
            uint32_t p = bvh->nodes[n].parent;
            if (n == bvh->nodes[p].link) {
                n = n + 1u;
                break;
            }
            refit_node(bvh, p, boxes, index);
            n = p;
        }
    }
}

/* gy_bvh_box_ray against `box` grown by `grow` on each side (`grown` false: as it is). */
static inline double grown_box_ray(const gy_bvh_box *box, bool grown, gy_vec3 grow, gy_vec3 origin,
                                   gy_vec3 inv, double t_max)
{
    if (!grown)
        return gy_bvh_box_ray(box, origin, inv, t_max);
    /* Growing the box by the moving box's half extents turns box-against-box into a ray test;
     * the float box is widened in double, so the test stays conservative. */
    gy_bvh_box g;
    const double gv[3] = {grow.x, grow.y, grow.z};
    for (int i = 0; i < 3; i++) {
        g.min[i] = nextafterf((float)((double)box->min[i] - gv[i]), -INFINITY);
        g.max[i] = nextafterf((float)((double)box->max[i] + gv[i]), INFINITY);
    }
    return gy_bvh_box_ray(&g, origin, inv, t_max);
}

/* The walk behind gy_bvh_raycast and gy_bvh_sweep; inlined into each with `grown` constant, so
 * rays pay nothing for the growing. */
static inline void walk_swept(const gy_bvh *bvh, bool grown, gy_vec3 center, gy_vec3 half,
                              gy_vec3 dir, double t_max, gy_bvh_ray_fn fn, void *ctx)
{
    if (bvh->node_count == 0)
        return;
    gy_vec3 origin = center;
    gy_vec3 inv = gy_bvh_ray_inverse(dir);
    double t_root = grown_box_ray(&bvh->nodes[0].box, grown, half, origin, inv, t_max);
    if (t_root < 0.0)
        return;
    struct {
        uint32_t node;
        double t;
    } stack[GY_BVH_MAX_DEPTH + 1];
    uint32_t top = 0;
    stack[top].node = 0;
    stack[top].t = t_root;
    top++;
    while (top > 0) {
        top--;
        if (stack[top].t > t_max)
            continue; /* a nearer hit was found after this node was pushed */
        uint32_t n = stack[top].node;
        for (;;) {
            uint32_t link = bvh->nodes[n].link;
            if (link & GY_BVH_LEAF_BIT) {
                t_max = fn(ctx, link & ~GY_BVH_LEAF_BIT, t_max);
                if (t_max < 0.0)
                    return;
                break;
            }
            double t0 = grown_box_ray(&bvh->nodes[link].box, grown, half, origin, inv, t_max);
            double t1 = grown_box_ray(&bvh->nodes[link + 1u].box, grown, half, origin, inv, t_max);
            if (t0 < 0.0 && t1 < 0.0)
                break;
            if (t0 >= 0.0 && t1 >= 0.0) {
                uint32_t near = t0 <= t1 ? link : link + 1u;
                assert(top < GY_BVH_MAX_DEPTH + 1);
                stack[top].node = t0 <= t1 ? link + 1u : link;
                stack[top].t = t0 <= t1 ? t1 : t0;
                top++;
                n = near;
            } else {
                n = t0 >= 0.0 ? link : link + 1u;
            }
        }
    }
}

void gy_bvh_raycast(const gy_bvh *bvh, gy_vec3 origin, gy_vec3 dir, double t_max, gy_bvh_ray_fn fn,
                    void *ctx)
{
    walk_swept(bvh, false, origin, gy_v3(0, 0, 0), dir, t_max, fn, ctx);
}

void gy_bvh_sweep(const gy_bvh *bvh, gy_vec3 center, gy_vec3 half, gy_vec3 dir, double t_max,
                  gy_bvh_ray_fn fn, void *ctx)
{
    walk_swept(bvh, true, center, half, dir, t_max, fn, ctx);
}

bool gy_bvh_overlap(const gy_bvh *bvh, const gy_bvh_box *box, gy_bvh_overlap_fn fn, void *ctx)
{
    if (bvh->node_count == 0 || !gy_bvh_box_overlaps(&bvh->nodes[0].box, box))
        return true;
    uint32_t stack[GY_BVH_MAX_DEPTH + 1];
    uint32_t top = 0;
    stack[top++] = 0;
    while (top > 0) {
        uint32_t n = stack[--top];
        for (;;) {
            uint32_t link = bvh->nodes[n].link;
            if (link & GY_BVH_LEAF_BIT) {
                if (!fn(ctx, link & ~GY_BVH_LEAF_BIT))
                    return false;
                break;
            }
            bool o0 = gy_bvh_box_overlaps(&bvh->nodes[link].box, box);
            bool o1 = gy_bvh_box_overlaps(&bvh->nodes[link + 1u].box, box);
            if (o0 && o1) {
                assert(top < GY_BVH_MAX_DEPTH + 1);
                stack[top++] = link + 1u;
                n = link;
            } else if (o0 || o1) {
                n = o0 ? link : link + 1u;
            } else {
                break;
            }
        }
    }
    return true;
}

/* ---- editing in place ------------------------------------------------------------------------ */

void gy_bvh_editor_init(gy_bvh_editor *e)
{
    memset(e, 0, sizeof *e);
    e->free_head = GY_BVH_NONE;
    e->logging = true;
}

gy_result gy_bvh_editor_set_logging(gy_bvh_editor *e, const gy_allocator *a, bool on)
{
    if (e == NULL || a == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (on == e->logging)
        return GY_OK;
    if (on) {
        if (e->capacity && resize_logs(e, a, 0, e->capacity) != GY_OK)
            return GY_ERR_OUT_OF_MEMORY;
        e->logging = true;
        return GY_OK;
    }
    gy_free(a, e->dirty, e->capacity);
    e->dirty = NULL;
    for (unsigned m = 0; m < GY_BVH_MIRRORS; m++) {
        gy_free(a, e->lists[m], (size_t)e->capacity * sizeof *e->lists[m]);
        e->lists[m] = NULL;
        e->counts[m] = 0;
    }
    e->logging = false;
    return GY_OK;
}

void gy_bvh_editor_fini(gy_bvh_editor *e, const gy_allocator *a)
{
    gy_bvh_editor_set_logging(e, a, false);
    gy_free(a, e->height, e->capacity);
    gy_bvh_editor_init(e);
}

void gy_bvh_editor_forget(gy_bvh_editor *e, unsigned m)
{
    assert(m < GY_BVH_MIRRORS);
    for (uint32_t i = 0; i < e->counts[m]; i++)
        e->dirty[e->lists[m][i]] &= (uint8_t) ~(1u << m);
    e->counts[m] = 0;
}

static uint8_t taller(uint8_t a, uint8_t b)
{
    return a > b ? a : b;
}

/* Writes record `rec` at position `at` under `parent` and re-points what hangs below it (its two
 * children's parent links, or its item's leaf). */
static void place(gy_bvh *bvh, uint32_t at, gy_bvh_node rec, uint8_t height, uint32_t parent)
{
    rec.parent = parent;
    bvh->nodes[at] = rec;
    bvh->editor->height[at] = height;
    log_node(bvh, at);
    if (rec.link & GY_BVH_LEAF_BIT) {
        bvh->leaf_of[rec.link & ~GY_BVH_LEAF_BIT] = at;
        return;
    }
    for (uint32_t c = rec.link; c <= rec.link + 1u; c++) {
        bvh->nodes[c].parent = at;
        log_node(bvh, c);
    }
}

/* AVL rotation at `a` whose child `up` is at least two levels taller than its other child: `up`
 * takes a's place; a (now holding `other` and up's shorter child) becomes a child of it, beside
 * up's taller child. Positions stay where they are: a keeps its pair of children, which now holds
 * the lowered node and the taller grandchild; up's old pair holds `other` and the shorter one. */
static void rotate(gy_bvh *bvh, uint32_t a, uint32_t up, uint32_t other)
{
    uint8_t *h = bvh->editor->height;
    uint32_t pair = bvh->nodes[a].link, r = bvh->nodes[up].link;
    gy_bvh_node o = bvh->nodes[other], f = bvh->nodes[r], g = bvh->nodes[r + 1u];
    uint8_t ho = h[other], hf = h[r], hg = h[r + 1u];
    bool f_taller = hf > hg;
    gy_bvh_node tall = f_taller ? f : g, low = f_taller ? g : f;
    uint8_t htall = f_taller ? hf : hg, hlow = f_taller ? hg : hf;
    place(bvh, r, o, ho, pair);
    place(bvh, r + 1u, low, hlow, pair);
    gy_bvh_node lowered = {gy_bvh_box_union(o.box, low.box), r, a};
    place(bvh, pair, lowered, (uint8_t)(1u + taller(ho, hlow)), a);
    place(bvh, pair + 1u, tall, htall, a);
    bvh->nodes[a].box = gy_bvh_box_union(lowered.box, tall.box);
    h[a] = (uint8_t)(1u + taller(h[pair], htall));
    log_node(bvh, a);
    bvh->editor->rotations++;
}

/* From node i up to the root: rebalance, then recompute box and height; stops once a node
 * (after the first) is left as it was. */
static void fix_upwards(gy_bvh *bvh, uint32_t i)
{
    uint8_t *h = bvh->editor->height;
    bool first = true;
    while (i != GY_BVH_NONE) {
        uint32_t b = bvh->nodes[i].link;
        int balance = (int)h[b + 1u] - (int)h[b];
        bool rotated = balance > 1 || balance < -1;
        if (balance > 1)
            rotate(bvh, i, b + 1u, b);
        else if (balance < -1)
            rotate(bvh, i, b, b + 1u);
        gy_bvh_node *n = &bvh->nodes[i];
        gy_bvh_box u = gy_bvh_box_union(bvh->nodes[b].box, bvh->nodes[b + 1u].box);
        uint8_t height = (uint8_t)(1u + taller(h[b], h[b + 1u]));
        bool changed = !gy_bvh_box_equal(&u, &n->box) || height != h[i];
        if (changed) {
            n->box = u;
            h[i] = height;
            log_node(bvh, i);
        }
        if (!changed && !rotated && !first)
            break;
        first = false;
        i = n->parent;
    }
    bvh->depth = h[0];
}

/* A pair of nodes from the free list, or appended. */
static gy_result take_pair(gy_bvh *bvh, const gy_allocator *a, uint32_t item_limit, uint32_t *out)
{
    gy_bvh_editor *e = bvh->editor;
    if (e->free_head != GY_BVH_NONE) {
        *out = e->free_head;
        e->free_head = bvh->nodes[*out].link;
        return GY_OK;
    }
    if (bvh->node_count > GY_BVH_MAX_ITEMS - 2u ||
        reserve_tree(bvh, a, bvh->node_count + 2u, item_limit) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    *out = bvh->node_count;
    bvh->node_count += 2u;
    return GY_OK;
}

static double surface(gy_bvh_box b)
{
    return box_area(&b);
}

gy_result gy_bvh_insert(gy_bvh *bvh, const gy_allocator *a, uint32_t item, gy_bvh_box box,
                        uint32_t item_limit)
{
    assert(bvh->editor != NULL && bvh->track_leaves && item < item_limit);
    if (bvh->node_count == 0) {
        if (reserve_tree(bvh, a, 1u, item_limit) != GY_OK)
            return GY_ERR_OUT_OF_MEMORY;
        bvh->editor->free_head = GY_BVH_NONE;
        bvh->node_count = 1;
        bvh->ordered = false;
        gy_bvh_node leaf = {box, GY_BVH_LEAF_BIT | item, GY_BVH_NONE};
        place(bvh, 0, leaf, 0, GY_BVH_NONE);
        bvh->depth = 0;
        bvh->editor->inserts++;
        return GY_OK;
    }
    if (reserve_tree(bvh, a, bvh->node_count, item_limit) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    /* Down to the sibling that costs least: stop where pairing with the node itself is cheaper
     * than descending (the cost of a node is its surface area; everything above it grows too). */
    uint32_t s = 0;
    while (!(bvh->nodes[s].link & GY_BVH_LEAF_BIT)) {
        const gy_bvh_node *n = &bvh->nodes[s];
        double area = surface(n->box), combined = surface(gy_bvh_box_union(n->box, box));
        double here = 2.0 * combined, inherited = 2.0 * (combined - area);
        double cost[2];
        for (uint32_t k = 0; k < 2; k++) {
            const gy_bvh_node *c = &bvh->nodes[n->link + k];
            double grown = surface(gy_bvh_box_union(c->box, box));
            cost[k] = (c->link & GY_BVH_LEAF_BIT) ? grown + inherited
                                                  : grown - surface(c->box) + inherited;
        }
        if (here < cost[0] && here < cost[1])
            break;
        s = n->link + (cost[1] < cost[0] ? 1u : 0u);
    }
    uint32_t q;
    if (take_pair(bvh, a, item_limit, &q) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    bvh->ordered = false;
    uint8_t *h = bvh->editor->height;
    gy_bvh_node old = bvh->nodes[s];
    uint8_t old_height = h[s];
    place(bvh, q, old, old_height, s);
    gy_bvh_node leaf = {box, GY_BVH_LEAF_BIT | item, s};
    place(bvh, q + 1u, leaf, 0, s);
    bvh->nodes[s].link = q;
    bvh->nodes[s].box = gy_bvh_box_union(old.box, box);
    h[s] = (uint8_t)(old_height + 1u);
    log_node(bvh, s);
    fix_upwards(bvh, s);
    bvh->editor->inserts++;
    return GY_OK;
}

void gy_bvh_remove(gy_bvh *bvh, uint32_t item)
{
    assert(bvh->editor != NULL && bvh->track_leaves && item < bvh->leaf_of_capacity);
    gy_bvh_editor *e = bvh->editor;
    uint32_t l = bvh->leaf_of[item];
    assert(l < bvh->node_count && bvh->nodes[l].link == (GY_BVH_LEAF_BIT | item));
    e->removes++;
    bvh->ordered = false;
    if (l == 0) { /* the last leaf */
        bvh->node_count = 0;
        bvh->depth = 0;
        e->free_head = GY_BVH_NONE;
        return;
    }
    uint32_t p = bvh->nodes[l].parent, first = (l & 1u) ? l : l - 1u;
    uint32_t sib = first + (l == first ? 1u : 0u);
    /* The sibling takes its parent's place; the pair goes to the free list. */
    place(bvh, p, bvh->nodes[sib], e->height[sib], bvh->nodes[p].parent);
    bvh->nodes[first].parent = bvh->nodes[first + 1u].parent = GY_BVH_FREE;
    bvh->nodes[first].link = e->free_head;
    bvh->nodes[first + 1u].link = 0;
    log_node(bvh, first);
    log_node(bvh, first + 1u);
    e->free_head = first;
    uint32_t up = bvh->nodes[p].parent;
    if (up != GY_BVH_NONE)
        fix_upwards(bvh, up);
    else
        bvh->depth = e->height[0];
}

gy_result gy_bvh_mirror(gy_bvh *dst, const gy_bvh *src, unsigned m, const gy_allocator *a,
                        uint32_t item_limit)
{
    gy_bvh_editor *e = src->editor;
    assert(e != NULL && m < GY_BVH_MIRRORS && dst->editor == NULL &&
           dst->track_leaves == src->track_leaves);
    if (reserve_tree(dst, a, src->node_count ? src->node_count : 1u, item_limit) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < e->counts[m]; i++) {
        uint32_t n = e->lists[m][i];
        e->dirty[n] &= (uint8_t) ~(1u << m);
        if (n >= src->node_count)
            continue; /* the tree was emptied since */
        const gy_bvh_node *node = &src->nodes[n];
        dst->nodes[n] = *node;
        if (dst->track_leaves && (node->link & GY_BVH_LEAF_BIT) && node->parent != GY_BVH_FREE)
            dst->leaf_of[node->link & ~GY_BVH_LEAF_BIT] = n;
    }
    e->counts[m] = 0;
    dst->node_count = src->node_count;
    dst->depth = src->depth;
    dst->ordered = src->ordered;
    return GY_OK;
}

static bool box_inside(const gy_bvh_box *inner, const gy_bvh_box *outer)
{
    for (int i = 0; i < 3; i++)
        if (inner->min[i] < outer->min[i] || inner->max[i] > outer->max[i])
            return false;
    return true;
}

/* An edited tree: walked from the root through its links (free nodes are never reached). */
static bool edited_is_valid(const gy_bvh *bvh, const gy_bvh_box *boxes, uint32_t count)
{
    const uint8_t *h = bvh->editor != NULL ? bvh->editor->height : NULL;
    if (bvh->nodes[0].parent != GY_BVH_NONE)
        return false;
    uint32_t stack[2u * GY_BVH_MAX_DEPTH + 2u], depth_of[2u * GY_BVH_MAX_DEPTH + 2u];
    uint32_t top = 0, leaves = 0, deepest = 0, visited = 0;
    stack[top] = 0;
    depth_of[top++] = 0;
    while (top > 0) {
        top--;
        uint32_t i = stack[top], d = depth_of[top];
        const gy_bvh_node *n = &bvh->nodes[i];
        if (i >= bvh->node_count || n->parent == GY_BVH_FREE || d >= GY_BVH_MAX_DEPTH ||
            ++visited > bvh->node_count)
            return false;
        deepest = d > deepest ? d : deepest;
        if (n->link & GY_BVH_LEAF_BIT) {
            uint32_t item = n->link & ~GY_BVH_LEAF_BIT;
            leaves++;
            if ((boxes != NULL && !gy_bvh_box_equal(&n->box, &boxes[item])) ||
                (h != NULL && h[i] != 0))
                return false;
            if (bvh->track_leaves && (item >= bvh->leaf_of_capacity || bvh->leaf_of[item] != i))
                return false;
            continue;
        }
        uint32_t c = n->link;
        if (c == 0 || (c & 1u) == 0 || c + 1u >= bvh->node_count)
            return false;
        gy_bvh_box u = gy_bvh_box_union(bvh->nodes[c].box, bvh->nodes[c + 1u].box);
        if (!gy_bvh_box_equal(&u, &n->box))
            return false;
        if (h != NULL) {
            int balance = (int)h[c + 1u] - (int)h[c];
            if (h[i] != 1u + taller(h[c], h[c + 1u]) || balance > 1 || balance < -1)
                return false;
        }
        for (uint32_t k = c; k <= c + 1u; k++) {
            if (bvh->nodes[k].parent != i)
                return false;
            stack[top] = k;
            depth_of[top++] = d + 1u;
        }
    }
    return leaves == count && deepest == bvh->depth && (h == NULL || h[0] == bvh->depth);
}

bool gy_bvh_is_valid(const gy_bvh *bvh, const gy_bvh_box *boxes, uint32_t count)
{
    if (count == 0)
        return bvh->node_count == 0;
    if (!bvh->ordered)
        return bvh->node_count > 0 && edited_is_valid(bvh, boxes, count);
    if (bvh->node_count != 2u * count - 1u || bvh->nodes[0].parent != GY_BVH_NONE)
        return false;
    uint32_t leaves = 0;
    for (uint32_t i = 0; i < bvh->node_count; i++) {
        const gy_bvh_node *n = &bvh->nodes[i];
        if (n->link & GY_BVH_LEAF_BIT) {
            uint32_t item = n->link & ~GY_BVH_LEAF_BIT;
            leaves++;
            if (boxes != NULL && !gy_bvh_box_equal(&n->box, &boxes[item]))
                return false;
            if (bvh->track_leaves && (item >= bvh->leaf_of_capacity || bvh->leaf_of[item] != i))
                return false;
            continue;
        }
        if (n->link <= i || n->link + 1u >= bvh->node_count)
            return false;
        for (uint32_t c = n->link; c <= n->link + 1u; c++)
            if (bvh->nodes[c].parent != i || !box_inside(&bvh->nodes[c].box, &n->box))
                return false;
    }
    return leaves == count;
}
