/* clinfer — Comparisons, logical and bitwise ops, Where. */
#include "ops/op.h"

const ClinferOpDef clinfer_ops_logic[] = {
  { NULL }
};
