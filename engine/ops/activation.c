/* clinfer — Unary activations and math functions. */
#include "ops/op.h"

const ClinferOpDef clinfer_ops_activation[] = {
  { NULL }
};
