#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages clinfer needs to build, test and run its
# demo (checked against Debian 12 bookworm). Safe to run again: when every
# package is already installed it does nothing, not even `apt-get update`.
# Runs as root, or through sudo (non-interactive sudo when there is no tty).
#
# Usage: scripts/install-deps.sh [--python]
#   --python  also installs the pip packages onnxruntime, openvino and numpy
#             for the python3 on PATH (used by scripts/make-goldens.py and
#             benchmarks/compare.py; the build and the tests never need them).
#             When that python refuses (PEP 668 "externally-managed") they go
#             into a virtual environment at .venv in the repository root.
set -euo pipefail

PACKAGES=(
  # build
  build-essential meson ninja-build pkg-config
  # engine: GLib, IR reader, ONNX protobuf schema, oneDNN CPU fast path
  libglib2.0-dev libxml2-dev libprotobuf-c-dev protobuf-c-compiler libonnx-dev libdnnl-dev
  # OpenCL device: loader, headers, a CPU implementation (PoCL) and clinfo
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  # GStreamer plugin and its tests (gst-check is in libgstreamer1.0-dev)
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base
  gstreamer1.0-plugins-good gstreamer1.0-tools libcairo2-dev
  # clinfermetaconvert's JSON (json-glib) and its schema test (jsonschema)
  libjson-glib-dev python3-jsonschema
  # the tensor meta's GObject introspection and the Python example's test
  gobject-introspection libgirepository1.0-dev python3-gi gir1.2-gstreamer-1.0
  gir1.2-gst-plugins-base-1.0
  # tests: ONNX backend node tests, fixture scripts and golden checks, leak checks
  libonnx-testdata python3 python3-numpy python3-onnx valgrind
  # suite oclgrind: every OpenCL kernel under a checker of invalid accesses
  oclgrind
  # the OpenVINO tests (tests/ir) pip-install openvino into a venv they make
  python3-venv
  # clang build and the IR reader's libFuzzer target (scripts/test-all.sh,
  # build-fuzz/): clang, its libFuzzer + sanitizer runtimes, clang's OpenMP
  clang libclang-rt-dev libomp-dev
)
PIP_PACKAGES=(onnxruntime openvino numpy)

want_python=0
for arg in "$@"; do
  case "$arg" in
    --python) want_python=1 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    if [ -t 0 ]; then sudo "$@"; else sudo -n "$@"; fi
  else
    echo "install-deps.sh: need root or sudo to run: $*" >&2
    exit 1
  fi
}

missing_packages() {
  local pkg status
  for pkg in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || echo "$pkg"
  done
}

apt_install() {
  local missing
  mapfile -t missing < <(missing_packages "$@")
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps.sh: all $# packages already installed"
    return 0
  fi
  echo "install-deps.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps.sh: needs a Debian or Ubuntu system (apt-get); install by hand:" >&2
  echo "  ${PACKAGES[*]}" >&2
  exit 1
fi

apt_install "${PACKAGES[@]}"

if [ "$want_python" -eq 1 ]; then
  python=$(command -v python3 || true)
  if [ -z "$python" ]; then
    echo "install-deps.sh: no python3 on PATH" >&2
    exit 1
  fi
  # Debian's python3 has no pip or venv module until these are installed.
  if [ "$(readlink -f "$python")" = "$(readlink -f /usr/bin/python3)" ]; then
    apt_install python3-pip python3-venv ca-certificates
  fi
  if ! "$python" -m pip --version >/dev/null 2>&1; then
    echo "install-deps.sh: $python has no pip (python3 -m pip); install pip for it" >&2
    exit 1
  fi
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  if "$python" -m pip install -q "${PIP_PACKAGES[@]}" 2>"$log"; then
    echo "install-deps.sh: pip packages installed for $python"
  elif grep -q externally-managed "$log"; then
    venv="$repo_root/.venv"
    echo "install-deps.sh: $python is externally managed (PEP 668); using $venv"
    [ -x "$venv/bin/python3" ] || "$python" -m venv "$venv"
    "$venv/bin/python3" -m pip install -q --upgrade pip
    "$venv/bin/python3" -m pip install -q "${PIP_PACKAGES[@]}"
    echo "install-deps.sh: activate it with: . .venv/bin/activate"
  else
    cat "$log" >&2
    exit 1
  fi
fi
