/* clinfer — CLINFER_API marks the functions libclinfer exports: the
 * library is built with hidden symbol visibility, so only the public API
 * is visible to programs and plugins that link it. */
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define CLINFER_API __attribute__ ((visibility ("default")))
#else
#define CLINFER_API
#endif
