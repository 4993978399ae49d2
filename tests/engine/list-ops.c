/* clinfer — prints the op registry as markdown table rows (op, domain,
 * opset range, family order), the source of docs/operators.md's tables.
 * With --check FILE, exits 1 listing every registered op that FILE does
 * not document as a "| `Op` |" row. */
#include "ops/op.h"
#include <stdio.h>
#include <string.h>

typedef struct {
  const char *doc;
  int missing;
} Check;

static void
print_def (const ClinferOpDef *d, gpointer user_data)
{
  char range[32];

  if (d->last_version)
    g_snprintf (range, sizeof range, "%d-%d", d->since_version, d->last_version);
  else
    g_snprintf (range, sizeof range, "%d+", d->since_version);
  printf ("| `%s` | %s | %s |\n", d->op_type, *d->domain ? d->domain : "ai.onnx",
      range);
}

static void
check_def (const ClinferOpDef *d, gpointer user_data)
{
  Check *c = user_data;
  g_autofree char *row = g_strdup_printf ("| `%s` |", d->op_type);

  if (d->flags & CLINFER_OP_SOURCE)
    return;
  if (!strstr (c->doc, row)) {
    printf ("not documented: %s (domain '%s', since %d)\n", d->op_type,
        d->domain, d->since_version);
    c->missing++;
  }
}

int
main (int argc, char **argv)
{
  Check c = { NULL, 0 };
  g_autofree char *text = NULL;

  if (argc == 3 && strcmp (argv[1], "--check") == 0) {
    if (!g_file_get_contents (argv[2], &text, NULL, NULL)) {
      fprintf (stderr, "list-ops: cannot read %s\n", argv[2]);
      return 1;
    }
    c.doc = text;
    clinfer_op_foreach (check_def, &c);
    if (c.missing == 0)
      printf ("every registered op is documented in %s\n", argv[2]);
    return c.missing ? 1 : 0;
  }
  clinfer_op_foreach (print_def, NULL);
  return 0;
}
