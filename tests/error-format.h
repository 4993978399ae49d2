/* clinfer tests — the one format of engine errors about a node
 * (clinfer_node_prefix_error() in engine/core/graph.h):
 *
 *   <model>: node <label>[ on <device>]: <what>
 *
 * assert_node_error() checks a message against it: the exact prefix, and
 * a <what> that names neither the node (its label) nor the model again. */
#pragma once

#include <glib.h>
#include <string.h>

static inline void
assert_node_error (const char *message, const char *model, const char *label,
    const char *device)
{
  g_autofree char *prefix = g_strdup_printf ("%s: node %s%s%s: ", model, label,
      device ? " on " : "", device ? device : "");
  const char *what;

  if (!g_str_has_prefix (message, prefix))
    g_error ("error format: '%s' does not start with '%s'", message, prefix);
  what = message + strlen (prefix);
  if (*what == '\0' || strstr (what, label) || strstr (what, model))
    g_error ("error format: '%s': after the prefix the node or model is "
        "named again, or nothing is said", message);
  g_test_message ("%s", message);
}
