/* ScaleShift of example-layers.xml: y = x * SCALE + SHIFT. INPUT0_TYPE,
 * OUTPUT0_TYPE and GLOBAL_WORKSIZE come from clinfer's JIT block, SCALE
 * and SHIFT from the <Define>s (the node's attributes scale and shift). */
__kernel void
scale_shift (__global const INPUT0_TYPE *x, __global OUTPUT0_TYPE *y)
{
  const uint i = get_global_id (0);

  if (i < GLOBAL_WORKSIZE[0])
    y[i] = x[i] * SCALE + SHIFT;
}
