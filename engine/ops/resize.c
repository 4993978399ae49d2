/* clinfer — Resize and Upsample. */
#include "ops/op.h"

const ClinferOpDef clinfer_ops_resize[] = {
  { NULL }
};
