/* clinfer — memory planning: intermediate tensors share one arena; a
 * region is reused once the last step reading its tensor has run. Slots a
 * device aliased into another slot share that slot's region. */
#include "plan/plan.h"

#define ARENA_ALIGN 64

/* An alias group: a root slot and the slots aliased into its region. */
typedef struct {
  guint root;
  gsize bytes;               /* aligned, covers every member */
  int first_step, last_step; /* union of the members' lifetimes */
  gsize offset;
} Region;

static gsize
align_up (gsize v, gsize align)
{
  return (v + align - 1) & ~(gsize) (align - 1);
}

/* The arena slot whose region holds @slot (@slot itself when it is not
 * aliased) and @slot's offset in that region. */
static guint
alias_root (const ClinferPlan *plan, guint slot, gsize *offset)
{
  guint cur = slot;

  *offset = 0;
  for (guint hops = 0; hops <= plan->slots->len; hops++) {
    const ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, cur);
    if (!s->aliased || s->alias_of >= plan->slots->len
        || g_array_index (plan->slots, ClinferSlot, s->alias_of).kind
        != CLINFER_SLOT_ARENA)
      return cur;
    *offset += s->alias_offset;
    cur = s->alias_of;
  }
  /* A cycle: a device bug; the slot then gets a region of its own. */
  g_warn_if_reached ();
  *offset = 0;
  return slot;
}

static int
by_size_desc (gconstpointer a, gconstpointer b, gpointer data)
{
  const Region *regions = data;
  const Region *x = &regions[*(const guint *) a];
  const Region *y = &regions[*(const guint *) b];
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  return x->root < y->root ? -1 : (x->root > y->root);
}

static gboolean
overlaps_in_time (const Region *a, const Region *b)
{
  return a->first_step <= b->last_step && b->first_step <= a->last_step;
}

/* One region per alias group, sized and timed by its members;
 * @region_of and @rel (per slot) name each arena slot's region and its
 * offset in it. */
static GArray *
collect_regions (ClinferPlan *plan, gsize align, int *region_of, gsize *rel)
{
  GArray *regions = g_array_new (FALSE, FALSE, sizeof (Region));
  guint n = plan->slots->len;
  g_autofree guint *root = g_new (guint, MAX (n, 1));

  for (guint i = 0; i < n; i++) {
    const ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    region_of[i] = -1;
    if (s->kind != CLINFER_SLOT_ARENA)
      continue;
    root[i] = alias_root (plan, i, &rel[i]);
    if (root[i] == i) {
      Region r = { i, 0, s->first_step, s->last_step, 0 };
      region_of[i] = (int) regions->len;
      g_array_append_val (regions, r);
    }
  }
  for (guint i = 0; i < n; i++) {
    const ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    Region *r;
    if (s->kind != CLINFER_SLOT_ARENA)
      continue;
    region_of[i] = region_of[root[i]];
    r = &g_array_index (regions, Region, region_of[i]);
    r->bytes = MAX (r->bytes, rel[i] + s->bytes);
    r->first_step = MIN (r->first_step, s->first_step);
    r->last_step = MAX (r->last_step, s->last_step);
  }
  for (guint k = 0; k < regions->len; k++) {
    Region *r = &g_array_index (regions, Region, k);
    r->bytes = r->bytes ? align_up (r->bytes, align) : align;
    /* Saturating: every region is under the memory limit (shape
     * inference refused larger tensors), but their count is the model's. */
    plan->unplanned_size = plan->unplanned_size > G_MAXSIZE - r->bytes
        ? G_MAXSIZE : plan->unplanned_size + r->bytes;
  }
  return regions;
}

/* Greedy by size (largest first), each region at the lowest offset where
 * it does not overlap in space any already placed region that is alive at
 * the same time. Simple and within a few percent of optimal on CNNs. */
void
clinfer_plan_assign_memory (ClinferPlan *plan)
{
  guint n = plan->slots->len;
  g_autofree int *region_of = g_new (int, MAX (n, 1));
  g_autofree gsize *rel = g_new0 (gsize, MAX (n, 1));
  g_autoptr (GArray) regions = NULL;
  g_autoptr (GArray) order = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) placed = g_array_new (FALSE, FALSE, sizeof (guint));
  /* A device may ask for more (ClinferDevice.arena_align; none does
   * today: the OpenCL device gave up sub-buffers); a power of two. */
  gsize align = MAX (plan->arena_align, ARENA_ALIGN);

  plan->arena_size = 0;
  plan->unplanned_size = 0;
  regions = collect_regions (plan, align, region_of, rel);
  for (guint k = 0; k < regions->len; k++)
    g_array_append_val (order, k);
  g_array_sort_with_data (order, by_size_desc, regions->data);
  for (guint k = 0; k < order->len; k++) {
    guint idx = g_array_index (order, guint, k);
    Region *r = &g_array_index (regions, Region, idx);
    gsize offset = 0;
    gboolean moved = TRUE;

    /* Bump past every live conflicting region until none overlaps. */
    while (moved) {
      moved = FALSE;
      for (guint j = 0; j < placed->len; j++) {
        const Region *o = &g_array_index (regions, Region,
            g_array_index (placed, guint, j));
        if (!plan->arena_unshared && !overlaps_in_time (r, o))
          continue;
        if (offset < o->offset + o->bytes && o->offset < offset + r->bytes) {
          offset = o->offset + o->bytes;
          moved = TRUE;
        }
        /* The plan is refused above the memory limit anyway. */
        if (offset > G_MAXSIZE / 4) {
          moved = FALSE;
          break;
        }
      }
    }
    r->offset = offset;
    plan->arena_size = MAX (plan->arena_size,
        offset > G_MAXSIZE / 4 ? G_MAXSIZE : offset + r->bytes);
    g_array_append_val (placed, idx);
  }
  for (guint i = 0; i < n; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    if (region_of[i] >= 0)
      s->offset = g_array_index (regions, Region, region_of[i]).offset + rel[i];
  }
}

/* A buffer of clinfer_plan_assign_buffers () and the lifetimes of the
 * slots placed in it. */
typedef struct {
  gsize bytes;
  GArray *users;             /* int pairs: first_step, last_step */
} PoolBuffer;

static gboolean
buffer_free_during (const PoolBuffer *p, const ClinferSlot *s)
{
  for (guint u = 0; u < p->users->len; u += 2) {
    int first = g_array_index (p->users, int, u);
    int last = g_array_index (p->users, int, u + 1);
    if (first <= s->last_step && s->first_step <= last)
      return FALSE;
  }
  return TRUE;
}

static int
slot_by_bytes_desc (gconstpointer a, gconstpointer b, gpointer data)
{
  const ClinferPlan *plan = data;
  const ClinferSlot *x = &g_array_index (plan->slots, ClinferSlot,
      *(const guint *) a);
  const ClinferSlot *y = &g_array_index (plan->slots, ClinferSlot,
      *(const guint *) b);
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  return *(const guint *) a < *(const guint *) b ? -1 : 1;
}

GArray *
clinfer_plan_assign_buffers (const ClinferPlan *plan, guint *buffer_of)
{
  g_autoptr (GArray) pool = g_array_new (FALSE, FALSE, sizeof (PoolBuffer));
  g_autoptr (GArray) order = g_array_new (FALSE, FALSE, sizeof (guint));
  GArray *sizes = g_array_new (FALSE, FALSE, sizeof (gsize));

  for (guint i = 0; i < plan->slots->len; i++) {
    const ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    buffer_of[i] = G_MAXUINT;
    if (s->kind == CLINFER_SLOT_ARENA && s->bytes > 0)
      g_array_append_val (order, i);
  }
  g_array_sort_with_data (order, slot_by_bytes_desc, (gpointer) plan);
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index (order, guint, k);
    const ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    guint best = G_MAXUINT;
    PoolBuffer *p;
    for (guint b = 0; b < pool->len; b++) {
      const PoolBuffer *c = &g_array_index (pool, PoolBuffer, b);
      if (buffer_free_during (c, s) && (best == G_MAXUINT
              || c->bytes < g_array_index (pool, PoolBuffer, best).bytes))
        best = b;
    }
    if (best == G_MAXUINT) {
      PoolBuffer nb = { s->bytes, g_array_new (FALSE, FALSE, sizeof (int)) };
      best = pool->len;
      g_array_append_val (pool, nb);
      g_array_append_val (sizes, s->bytes);
    }
    p = &g_array_index (pool, PoolBuffer, best);
    g_array_append_val (p->users, s->first_step);
    g_array_append_val (p->users, s->last_step);
    buffer_of[i] = best;
  }
  for (guint b = 0; b < pool->len; b++)
    g_array_unref (g_array_index (pool, PoolBuffer, b).users);
  return sizes;
}
