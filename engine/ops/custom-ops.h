/* clinfer — custom CPU op sets (engine/ops/custom-ops.c): the ops a
 * compile config holds, each wrapped in a ClinferOpDef so the rest of
 * the engine (shape inference, planning, the CPU executor, the GPU
 * device's CPU steps) treats them like built-in ops. Public API:
 * <clinfer/custom-op.h>. */
#pragma once

#include <clinfer/custom-op.h>
#include "ops/op.h"

G_BEGIN_DECLS

/* A set of op definitions beyond the built-in registry: custom CPU ops
 * (from libraries or code) and placeholder defs for custom OpenCL layers
 * of a config file. Refcounted; entries are shared between copies. */
typedef struct _ClinferOpSet ClinferOpSet;

ClinferOpSet *clinfer_op_set_new (void);
ClinferOpSet *clinfer_op_set_ref (ClinferOpSet *set);
void clinfer_op_set_unref (ClinferOpSet *set);
/* A new set holding the entries of @set (shared). */
ClinferOpSet *clinfer_op_set_copy (const ClinferOpSet *set);
guint clinfer_op_set_get_size (const ClinferOpSet *set);
/* Drops the entries from index @size on. */
void clinfer_op_set_truncate (ClinferOpSet *set, guint size);
/* Appends the entries of @src that @dst does not hold yet. */
void clinfer_op_set_merge (ClinferOpSet *dst, const ClinferOpSet *src);

/* Loads @path and runs its registration function into @set. */
gboolean clinfer_op_set_add_library (ClinferOpSet *set, const char *path,
    GError **error);
/* Adds @op (copied) from code; @origin names the caller in errors. */
gboolean clinfer_op_set_add_custom_op (ClinferOpSet *set,
    const ClinferCustomOp *op, const char *origin, GError **error);
/* Adds @def (not copied: @def must live until @destroy (@owner) runs,
 * which happens when the last set holding it is gone). Used by devices
 * for custom layers. Never clashes: a later def of the same name wins
 * over nothing but built-ins. */
void clinfer_op_set_add_def (ClinferOpSet *set, const ClinferOpDef *def,
    gpointer owner, GDestroyNotify destroy);

/* The def for (domain, op_type) at @opset, or NULL. */
const ClinferOpDef *clinfer_op_set_lookup (const ClinferOpSet *set,
    const char *domain, const char *op_type, int opset);
/* TRUE when @def came from a custom CPU op (it runs on the CPU on every
 * device). */
gboolean clinfer_op_def_is_custom (const ClinferOpDef *def);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferOpSet, clinfer_op_set_unref)

G_END_DECLS
