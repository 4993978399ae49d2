#!/usr/bin/env bash
# Sets up Intel's OpenCL CPU runtime as an OpenCL platform (ICD) for clinfer on
# a machine without a GPU (checked on Debian 12 bookworm; any x86-64 CPU, AMD
# or Intel, AVX2 or AVX-512), using only PyPI: the wheels intel-opencl-rt,
# intel-cmplr-lib-rt and tbb (pinned below, with their hashes) are fetched with
# `pip download` and unpacked into DIR. Nothing is installed into any Python
# environment and nothing is left outside DIR. The system's ICD loader
# (ocl-icd-libopencl1) and clinfo must be installed (scripts/install-deps.sh).
#
# Usage: scripts/setup-intel-opencl.sh [--print-env] [DIR]
#   DIR          where the runtime goes (default: $CLINFER_INTEL_OPENCL_DIR, or
#                else $HOME/.cache/clinfer/intel-opencl); about 410 MB, and about
#                1 GB more while it is being set up. No blanks or ':' in it.
#   --print-env  print only the export lines on stdout (everything else goes to
#                stderr), for: eval "$(scripts/setup-intel-opencl.sh --print-env)"
#
# Safe to run again: when DIR already holds a working setup of these versions
# it only checks it (clinfo) and prints the export lines. Otherwise it sets it
# up, checks with clinfo that an Intel CPU device appears, builds and runs a
# test kernel in half precision (when cc and the OpenCL headers are there),
# prints the device's name, OpenCL version and whether it has cl_khr_fp16, and
# ends with the export lines (also kept in DIR/env.sh, to source):
#   OCL_ICD_VENDORS   DIR/vendors, holding intel.icd: only the Intel platform is
#                     listed then (not /etc/OpenCL/vendors, so not PoCL either)
#   LD_LIBRARY_PATH   DIR/lib first: the runtime, its compiler runtime (libimf,
#                     libsvml, libirng, libintlc) and oneTBB
# The runtime reads DIR/lib/cl.cfg (shipped in the wheel, next to
# libintelocl.so); its CL_CONFIG_* settings can also be given as environment
# variables, e.g. CL_CONFIG_CPU_TARGET_ARCH=core-avx2 to force AVX2 code.
set -euo pipefail

# Pinned together: intel-opencl-rt 2026.2 wants tbb 2023.* and the 2026.*
# compiler runtime. intel-cmplr-lic-rt (a licence text only) is left out.
RUNTIME_VERSION=2026.2.0
WHEELS=(
  "intel-opencl-rt==$RUNTIME_VERSION --hash=sha256:6b6215a420598b4999ee01caca6d5cbe106aa4155c46c52377619c5aafce9f67"
  "intel-cmplr-lib-rt==$RUNTIME_VERSION --hash=sha256:9f713083073a820d2496a6da8e8d4f3482aba6640f74521d25ea48dcebe72748"
  "tbb==2023.2.0 --hash=sha256:7d80615b6e970f11671fa05b6eaa9483ac864fbfe525ac280271a78b37870b7c"
)
# What DIR/.setup-complete must hold for DIR to count as set up.
STAMP="intel-opencl-rt $RUNTIME_VERSION, intel-cmplr-lib-rt $RUNTIME_VERSION, tbb 2023.2.0 (layout 1)"

me=setup-intel-opencl.sh
print_env=0
dir=
for arg in "$@"; do
  case "$arg" in
    --print-env) print_env=1 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "$me: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    *) [ -z "$dir" ] || { echo "$me: only one DIR, please" >&2; exit 2; }
      dir=$arg ;;
  esac
done

# With --print-env, stdout carries the export lines alone (on fd 3).
if [ "$print_env" -eq 1 ]; then
  exec 3>&1 1>&2
else
  exec 3>&1
fi

die() { echo "$me: $*" >&2; exit 1; }

if [ -z "$dir" ]; then
  dir=${CLINFER_INTEL_OPENCL_DIR:-${HOME:?$me: HOME is not set; name a DIR}/.cache/clinfer/intel-opencl}
fi
# The runtime finds its own files from libintelocl.so's path and cuts that path
# at the first blank: with one in DIR, building a kernel fails and the runtime
# ends the process ("err: -2", exit status 1). ':' would split LD_LIBRARY_PATH.
check_dir() {
  case "$1" in
    *[[:space:]:\"\$\`\\]*) die "DIR must not contain blanks or any of : \" \$ \` \\ (the runtime cannot cope): $1" ;;
  esac
}
check_dir "$dir"

[ "$(uname -m)" = x86_64 ] || die "the Intel OpenCL CPU runtime is x86-64 only (this is $(uname -m))"
command -v clinfo >/dev/null 2>&1 ||
  die "clinfo is missing (apt-get install clinfo ocl-icd-libopencl1, or scripts/install-deps.sh)"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)
check_dir "$dir"

# One setup at a time per DIR (parallel test runs may all call --print-env).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$dir/.lock"
  flock -w 1800 9 || die "timed out waiting for another setup of $dir"
fi

write_env() {
  cat >"$dir/env.sh" <<EOF
# Intel OpenCL CPU runtime $RUNTIME_VERSION (PyPI wheels), set up by
# scripts/setup-intel-opencl.sh. Use it with: . "$dir/env.sh"
export OCL_ICD_VENDORS="$dir/vendors"
export LD_LIBRARY_PATH="$dir/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
EOF
}

print_exports() { grep '^export ' "$dir/env.sh" >&3; }

# Runs clinfo under DIR/env.sh and sets device_name, device_version,
# driver_version, has_fp16 and clinfo_stderr; returns 1 when no Intel CPU
# device shows up.
verify() {
  local raw errfile
  errfile=$(mktemp)
  # shellcheck source=/dev/null
  if ! raw=$(. "$dir/env.sh" && unset OCL_ICD_FILENAMES && clinfo --raw 2>"$errfile"); then
    clinfo_stderr=$(cat "$errfile"); rm -f "$errfile"
    return 1
  fi
  clinfo_stderr=$(cat "$errfile"); rm -f "$errfile"
  # Lines look like: [INTEL/0]    CL_DEVICE_NAME    AMD EPYC
  field() {
    awk -v key="$1" '$1 ~ /\/0\]$/ && $2 == key {
      sub(/^[^]]*\] +[^ ]+ +/, ""); sub(/ +$/, ""); print; exit }' <<<"$raw"
  }
  grep -q '^\[[^]]*\] *CL_PLATFORM_NAME  *Intel(R) OpenCL' <<<"$raw" || return 1
  [ "$(field CL_DEVICE_TYPE)" = CL_DEVICE_TYPE_CPU ] || return 1
  device_name=$(field CL_DEVICE_NAME)
  device_version=$(field CL_DEVICE_VERSION)
  driver_version=$(field CL_DRIVER_VERSION)
  case " $(field CL_DEVICE_EXTENSIONS) " in
    *" cl_khr_fp16 "*) has_fp16=yes ;;
    *) has_fp16=no ;;
  esac
  [ -n "$device_name" ]
}

# After a fresh setup, clinfo's word is not enough (the runtime can still fail
# when it compiles): build and run one kernel, in half precision when the
# device has cl_khr_fp16, if a C compiler and the OpenCL headers are there.
kernel_check() {
  local tmp cc=${CC:-cc} out
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "$me: no C compiler ($cc), so no kernel check (clinfo only)"
    return 0
  fi
  tmp=$(mktemp -d)
  cat >"$tmp/check.c" <<'C_SOURCE'
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
static const char *src =
  "#ifdef cl_khr_fp16\n"
  "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
  "__kernel void k(__global float *x) {\n"
  "  size_t i = get_global_id(0); half h = (half)x[i];\n"
  "  x[i] = (float)(h * (half)2.0f + (half)1.0f); }\n"
  "#else\n"
  "__kernel void k(__global float *x) {\n"
  "  size_t i = get_global_id(0); x[i] = x[i] * 2.0f + 1.0f; }\n"
  "#endif\n";
#define CHECK(what, e) if ((e) != CL_SUCCESS) { printf("%s failed (%d)\n", what, (int)(e)); return 1; }
int main(void) {
  enum { N = 64 };
  float x[N];
  size_t n = N;
  cl_int e;
  cl_platform_id p;
  cl_device_id d;
  for (int i = 0; i < N; i++) x[i] = 0.5f * (float)i;
  CHECK("clGetPlatformIDs", clGetPlatformIDs(1, &p, NULL));
  CHECK("clGetDeviceIDs", clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &d, NULL));
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  CHECK("clCreateContext", e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  CHECK("clCreateCommandQueue", e);
  cl_program prog = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  CHECK("clCreateProgramWithSource", e);
  CHECK("clBuildProgram", clBuildProgram(prog, 1, &d, "", NULL, NULL));
  cl_kernel k = clCreateKernel(prog, "k", &e);
  CHECK("clCreateKernel", e);
  cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof x, x, &e);
  CHECK("clCreateBuffer", e);
  CHECK("clSetKernelArg", clSetKernelArg(k, 0, sizeof b, &b));
  CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
  CHECK("clEnqueueReadBuffer", clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof x, x, 0, NULL, NULL));
  for (int i = 0; i < N; i++)
    if (x[i] != (float)i + 1.0f) { printf("x[%d] = %g, not %d\n", i, x[i], i + 1); return 1; }
  printf("ok\n");
  return 0;
}
C_SOURCE
  if ! "$cc" -o "$tmp/check" "$tmp/check.c" -lOpenCL >"$tmp/cc.log" 2>&1; then
    echo "$me: cannot build the kernel check (needs ocl-icd-opencl-dev and opencl-headers), clinfo only"
    rm -rf "$tmp"
    return 0
  fi
  # shellcheck source=/dev/null
  if out=$(. "$dir/env.sh" && unset OCL_ICD_FILENAMES && "$tmp/check" 2>&1) &&
     [ "${out##*$'\n'}" = ok ]; then
    echo "$me: kernel check passed ($([ "$has_fp16" = yes ] && echo half || echo float) arithmetic)"
    rm -rf "$tmp"
    return 0
  fi
  rm -rf "$tmp"
  printf '%s\n' "$out" >&2
  die "a test kernel does not build or run on the Intel OpenCL device in $dir"
}

if [ -f "$dir/.setup-complete" ] && [ "$(cat "$dir/.setup-complete")" = "$STAMP" ] &&
   [ -f "$dir/env.sh" ] && verify; then
  echo "$me: already set up in $dir: $device_name, $device_version, cl_khr_fp16: $has_fp16"
  print_exports
  exit 0
fi

start=$SECONDS
python=${PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 || die "no $python on PATH (needed for pip download)"
if ! "$python" -m pip --version >/dev/null 2>&1; then
  # Debian's python3 has no pip, but python3-venv (scripts/install-deps.sh)
  # makes a virtual environment that has one; only pip download runs there.
  "$python" -m venv "$dir/.pip-venv" >/dev/null 2>&1 &&
    "$dir/.pip-venv/bin/python" -m pip --version >/dev/null 2>&1 ||
    die "$python has no pip and cannot make a venv with one (apt-get install python3-venv or python3-pip)"
  python=$dir/.pip-venv/bin/python
fi

avail_kb=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
[ "${avail_kb:-0}" -ge 1300000 ] || die "need about 1.3 GB free in $dir (have $((${avail_kb:-0} / 1024)) MB)"

echo "$me: setting up the Intel OpenCL CPU runtime $RUNTIME_VERSION in $dir"
rm -rf "${dir:?}/.staging" "${dir:?}/lib" "${dir:?}/share" "${dir:?}/vendors" "${dir:?}/env.sh" \
  "${dir:?}/.setup-complete"
staging=$dir/.staging
mkdir -p "$staging/wheels" "$staging/unpacked" "$staging/prefix/lib" "$staging/prefix/share"
trap 'rm -rf "$staging"' EXIT

printf '%s\n' "${WHEELS[@]}" >"$staging/requirements.txt"
echo "$me: downloading the wheels from PyPI (about 270 MB)"
"$python" -m pip download --no-deps --only-binary=:all: --require-hashes --no-cache-dir \
  --disable-pip-version-check --progress-bar off -d "$staging/wheels" -r "$staging/requirements.txt"

echo "$me: unpacking"
for whl in "$staging"/wheels/*.whl; do
  name=$(basename "$whl" .whl)
  "$python" -m zipfile -e "$whl" "$staging/unpacked/$name"
  rm -f "$whl"
  data=$(echo "$staging/unpacked/$name"/*.data/data)
  [ -d "$data/lib" ] || die "$name has no .data/data/lib folder; not the expected wheel layout"
  for f in "$data/lib"/*; do
    [ ! -e "$staging/prefix/lib/$(basename "$f")" ] || die "$name: lib/$(basename "$f") is in two wheels"
    mv "$f" "$staging/prefix/lib/"
  done
  # share/ holds only licence texts (share/doc/<package>/licensing).
  [ ! -d "$data/share" ] || cp -R "$data/share/." "$staging/prefix/share/"
  rm -rf "${staging:?}/unpacked/$name"
done

lib=$staging/prefix/lib
[ -f "$lib/libintelocl.so" ] || die "libintelocl.so is not in the intel-opencl-rt wheel"
# Intel's own copy of the ICD loader would shadow the system's libOpenCL.so.1
# through LD_LIBRARY_PATH; icx-lto.so is a 90 MB linker plugin for icx.
rm -f "$lib"/libOpenCL.so* "$lib/icx-lto.so"
# Wheels hold no symbolic links, so libfoo.so, libfoo.so.N and libfoo.so.N.M
# arrive as copies (300 MB for libcommon_clang and libintelocl alone): keep the
# longest name of each set of identical files and link the others to it.
(
  cd "$lib"
  prev=
  sha256sum -- * | awk '{ print $1, length($2), $2 }' | sort -k1,1 -k2,2nr |
    while read -r hash _ name; do
      if [ "$hash" = "$prev" ]; then ln -sfn "$keep" "$name"; else prev=$hash keep=$name; fi
    done
)

mv "$lib" "$dir/lib"
mv "$staging/prefix/share" "$dir/share"
mkdir -p "$dir/vendors"
echo "$dir/lib/libintelocl.so" >"$dir/vendors/intel.icd"
write_env
rm -rf "$staging"
trap - EXIT

echo "$me: checking with clinfo"
if ! verify; then
  [ -z "${clinfo_stderr:-}" ] || printf '%s\n' "$clinfo_stderr" >&2
  die "clinfo shows no Intel(R) OpenCL CPU device with OCL_ICD_VENDORS=$dir/vendors; the setup in $dir does not work"
fi
kernel_check
echo "$STAMP" >"$dir/.setup-complete"

[ -z "$clinfo_stderr" ] || { echo "$me: clinfo printed on stderr:"; printf '%s\n' "$clinfo_stderr"; }
echo "$me: done in $((SECONDS - start)) s, $(du -sh "$dir" | cut -f1) in $dir"
echo "  device:        $device_name"
echo "  version:       $device_version (driver $driver_version)"
echo "  cl_khr_fp16:   $has_fp16"
echo "$me: to use it, source $dir/env.sh or run:"
print_exports
