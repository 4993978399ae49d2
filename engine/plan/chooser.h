/* clinfer — picks one of two ways to run the same work by measured time.
 *
 * A device that can run a request two ways (the CPU device: two arena
 * layouts) asks the chooser which to use before each request and tells it
 * the time afterwards. The faster way depends on things only a measurement
 * shows and that change while a program runs (where a VM's vCPUs sit), so
 * the chooser tries both at the start and again every so often:
 *
 *  - trial: CLINFER_CHOOSER_RUNS requests one way, then as many the other;
 *    the first of each run of requests is not counted (its memory is cold);
 *    the faster (smaller minimum) is kept;
 *  - steady: the kept way; every CLINFER_CHOOSER_PERIOD requests a probe of
 *    CLINFER_CHOOSER_RUNS requests the other way. The probe's minimum is
 *    compared with the minimum of the kept way's last runs just before it,
 *    and the other way is kept from then on only when it is at least
 *    CLINFER_CHOOSER_MARGIN_PCT percent faster.
 *
 * With one way it always answers 0. Pure bookkeeping: no clock, no
 * allocation, so it is unit-tested with made-up times. */
#pragma once

#include <glib.h>
#include <string.h>

G_BEGIN_DECLS

#define CLINFER_CHOOSER_RUNS 4
#define CLINFER_CHOOSER_PERIOD 128
#define CLINFER_CHOOSER_MARGIN_PCT 3

typedef struct {
  guint n_ways;              /* 1 or 2 */
  guint kept;                /* the way used between probes */
  guint next;                /* the way the next request runs */
  guint in_run;              /* requests done in the current run of one way */
  guint since_probe;         /* steady requests since the last probe */
  gboolean trial;            /* still in the first trial */
  gint64 run_min;            /* minimum of the current trial or probe run */
  gint64 first_min;          /* the trial's minimum for way 0 */
  gint64 recent[CLINFER_CHOOSER_RUNS - 1];  /* the kept way's last times */
  guint n_recent;
  guint switches;            /* times the kept way changed after the trial */
} ClinferChooser;

void clinfer_chooser_init (ClinferChooser *c, guint n_ways);
/* The way the next request runs. */
guint clinfer_chooser_next (const ClinferChooser *c);
/* Records the time (any unit) of the request that ran way @way. */
void clinfer_chooser_record (ClinferChooser *c, guint way, gint64 t);

G_END_DECLS
