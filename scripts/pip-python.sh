# Sourced by the fetch scripts (fetch-ocr-models.sh, fetch-bench-models.sh):
# pip_python DIR prints a Python that has pip, for `pip download` only
# ($PYTHON or python3, else a venv made in DIR/.pip-venv: Debian's python3
# has no pip). Nothing is installed into any Python.
pip_python () {
  local python=${PYTHON:-python3}
  command -v "$python" >/dev/null 2>&1 || { echo "no $python" >&2; return 1; }
  if "$python" -m pip --version >/dev/null 2>&1; then
    echo "$python"
    return 0
  fi
  "$python" -m venv "$1/.pip-venv" >/dev/null 2>&1 &&
    "$1/.pip-venv/bin/python" -m pip --version >/dev/null 2>&1 ||
    { echo "$python has no pip and cannot make a venv with one" >&2; return 1; }
  echo "$1/.pip-venv/bin/python"
}
