/* GStreamer
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * plugin.c: registers the clinfer plugin's elements
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinfer.h"
#include "gstclinferoverlay.h"
#include "gstclinfertrack.h"
#ifdef GST_CLINFER_HAVE_JSON
#include "gstclinfermetaconvert.h"
#endif

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  ret |= GST_ELEMENT_REGISTER (clinfer, plugin);
  ret |= GST_ELEMENT_REGISTER (clinferoverlay, plugin);
  ret |= GST_ELEMENT_REGISTER (clinfertrack, plugin);
#ifdef GST_CLINFER_HAVE_JSON
  ret |= GST_ELEMENT_REGISTER (clinfermetaconvert, plugin);
#endif
  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR,
    GST_VERSION_MINOR,
    clinfer,
    "Neural-network inference on video frames with the clinfer engine",
    plugin_init, PACKAGE_VERSION, "Apache 2.0", PACKAGE_NAME, PACKAGE_ORIGIN)
