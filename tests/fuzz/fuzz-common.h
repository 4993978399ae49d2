/* clinfer — what the fuzz targets (tests/fuzz) share: quiet logging, a
 * compile on the CPU device under a small memory limit, and a reader of
 * the fuzz input's bytes. Built with meson -Dfuzzing=true; with clang each
 * target is a libFuzzer target (CLINFER_LIBFUZZER), with gcc fuzz-common.c
 * adds a stand-alone main() that replays seeds and mutates them. */
#pragma once

#include <clinfer/clinfer.h>

G_BEGIN_DECLS

/* The memory limit targets compile with: far below libFuzzer's
 * -rss_limit_mb, so an input asking for more is refused by the engine
 * (the behaviour under test) rather than killing the fuzzer. */
#define FUZZ_MEMORY_LIMIT (G_GUINT64_CONSTANT (64) << 20)

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

/* What each target defines: feeds @data to the product. FALSE with
 * @error when the product refused it (fine: refusing is not crashing);
 * the replay test (fuzz-replay.c) compares that error with what the
 * reproducer's .expect file says. LLVMFuzzerTestOneInput() calls it. */
gboolean fuzz_one (const guint8 *data, gsize size, GError **error);

/* The limit fuzz_compile() uses; FUZZ_MEMORY_LIMIT unless a target sets
 * another before its first compile. */
extern guint64 fuzz_memory_limit;

/* Once per process: silences the engine's log (an error path logs). */
void fuzz_init (void);

/* Compiles @model for @device (NULL: "CPU") with one thread and
 * fuzz_memory_limit, after giving every dynamic input dim the value 2;
 * (transfer full) the compiled model, or NULL when the engine refused it
 * with @error. */
ClinferCompiled *fuzz_compile (ClinferModel *model, const char *device,
    GError **error);

/* The fuzz input read front to back; reads past its end give zeros. */
typedef struct {
  const guint8 *data;
  gsize size;
} FuzzInput;

guint8 fuzz_u8 (FuzzInput *in);
guint32 fuzz_u32 (FuzzInput *in);
/* Reading every byte of an output into this proves it is all readable
 * (AddressSanitizer checks each read). */
extern volatile guint8 fuzz_sink;

/* Up to @max bytes (fewer when the input ends), advancing past them. */
const guint8 *fuzz_bytes (FuzzInput *in, gsize max, gsize *n);

G_END_DECLS
