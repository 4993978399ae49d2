/* clinfer — the two-way chooser (chooser.h). */
#include "plan/chooser.h"

void
clinfer_chooser_init (ClinferChooser *c, guint n_ways)
{
  memset (c, 0, sizeof (*c));
  c->n_ways = CLAMP (n_ways, 1, 2);
  c->trial = c->n_ways == 2;
  c->run_min = G_MAXINT64;
}

guint
clinfer_chooser_next (const ClinferChooser *c)
{
  return c->next;
}

static gint64
recent_min (const ClinferChooser *c)
{
  gint64 m = G_MAXINT64;

  for (guint i = 0; i < c->n_recent; i++)
    m = MIN (m, c->recent[i]);
  return m;
}

/* Ends a trial or probe run of way @way with minimum c->run_min. */
static void
end_run (ClinferChooser *c, guint way)
{
  gint64 kept_min;

  if (c->trial && way == 0) {
    c->first_min = c->run_min;
    c->next = 1;
  } else {
    kept_min = c->trial ? c->first_min : recent_min (c);
    /* Switch only when faster by the margin (no overflow: times are
     * far below G_MAXINT64 / 100). */
    if (c->run_min < G_MAXINT64 / 100 && (kept_min == G_MAXINT64
            || c->run_min * 100 < kept_min * (100 - CLINFER_CHOOSER_MARGIN_PCT))) {
      if (!c->trial)
        c->switches++;
      c->kept = way;
      c->n_recent = 0;
    }
    c->trial = FALSE;
    c->next = c->kept;
    c->since_probe = 0;
  }
  c->in_run = 0;
  c->run_min = G_MAXINT64;
}

void
clinfer_chooser_record (ClinferChooser *c, guint way, gint64 t)
{
  if (c->n_ways < 2 || way != c->next)
    return;
  if (c->trial || way != c->kept) {
    /* A trial or probe run: the first request warms the memory. */
    if (c->in_run > 0)
      c->run_min = MIN (c->run_min, t);
    if (++c->in_run == CLINFER_CHOOSER_RUNS)
      end_run (c, way);
    return;
  }
  /* Steady on the kept way: keep its last times (not the first after a
   * probe), and probe the other way every CLINFER_CHOOSER_PERIOD. */
  if (c->in_run++ > 0) {
    if (c->n_recent == G_N_ELEMENTS (c->recent)) {
      memmove (c->recent, c->recent + 1,
          sizeof (c->recent[0]) * (c->n_recent - 1));
      c->n_recent--;
    }
    c->recent[c->n_recent++] = t;
  }
  if (++c->since_probe >= CLINFER_CHOOSER_PERIOD) {
    c->next = 1 - c->kept;
    c->in_run = 0;
    c->run_min = G_MAXINT64;
  }
}
