/* clinfer — Index ops (GatherElements, GatherND, ScatterND, OneHot, NonZero, TopK, CumSum, Trilu, Range). */
#include "ops/op.h"

const ClinferOpDef clinfer_ops_index[] = {
  { NULL }
};
