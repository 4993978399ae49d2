/* Upsample2x of example-layers.xml: nearest-neighbour 2x in y and x.
 * INPUT0_DIMS / OUTPUT0_DIMS are b, f, y, x (JIT block); one work-item per
 * output pixel, WorkSizes global="X,Y,B*F". */
__kernel void
upsample2x (__global const INPUT0_TYPE *x, __global OUTPUT0_TYPE *y)
{
  const uint ox = get_global_id (0), oy = get_global_id (1);
  const uint bf = get_global_id (2);
  const uint iw = INPUT0_DIMS[3], ih = INPUT0_DIMS[2];
  const uint ow = OUTPUT0_DIMS[3], oh = OUTPUT0_DIMS[2];

  if (ox < ow && oy < oh)
    y[(bf * oh + oy) * ow + ox] = x[(bf * ih + oy / 2) * iw + ox / 2];
}
