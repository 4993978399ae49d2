"""The Python environment of the OpenVINO checks in tests/ir.

When CLINFER_IR_VENV names a folder (meson sets it to BUILD/ir-venv), the
check runs inside a virtual environment there: created with
`python3 -m venv` on the first run, given the packages of requirements.txt
beside this file with pip, and reused by every later run. Creation and
installation hold a lock, so tests started in parallel wait for the first.
When that cannot be done (no venv module, no network for pip) the check
exits 77, which meson reports as skipped, never as passed.

Without CLINFER_IR_VENV the check runs in the interpreter that started it.
"""

import fcntl
import os
import subprocess
import sys

SKIP = 77
# compile_model() config for every check: OpenVINO's CPU plugin computes in
# bf16 by default where the CPU has native bf16 (AVX512-BF16: AMD Zen 4,
# Intel Sapphire Rapids), and the checks compare with f32 references.
F32 = {"INFERENCE_PRECISION_HINT": "f32"}
REQUIREMENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "requirements.txt")
# Modules the checks import, one per requirement.
MODULES = ("openvino", "numpy", "onnx")


def _skip(tool, why):
    print("%s: skipped: %s" % (tool, why), flush=True)
    sys.exit(SKIP)


def _has_modules(python):
    probe = "import %s" % ", ".join(MODULES)
    return subprocess.run([python, "-c", probe], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def _prepare(tool, venv):
    python = os.path.join(venv, "bin", "python3")
    if not os.path.exists(python):
        print("%s: creating the virtual environment %s" % (tool, venv), flush=True)
        proc = subprocess.run([sys.executable, "-m", "venv", venv], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True)
        if proc.returncode != 0 or not os.path.exists(python):
            _skip(tool, "`%s -m venv %s` failed (Debian: apt install python3-venv): %s" % (
                sys.executable, venv, proc.stdout.strip()[-400:]))
    if _has_modules(python):
        return python
    print("%s: pip install -r %s into %s" % (tool, REQUIREMENTS, venv), flush=True)
    # Short network timeouts: offline, the check is skipped within a minute.
    proc = subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check",
                           "--quiet", "--timeout", "30", "--retries", "1",
                           "-r", REQUIREMENTS],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode != 0 or not _has_modules(python):
        _skip(tool, "pip could not install %s (offline?): %s" % (
            ", ".join(MODULES), proc.stdout.strip()[-600:]))
    return python


def enter(tool):
    """Re-runs the calling script inside the environment; returns when already there."""
    venv = os.environ.get("CLINFER_IR_VENV")
    if not venv:
        return
    venv = os.path.abspath(venv)
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    with open(venv + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        python = _prepare(tool, venv)
    sys.stdout.flush()
    os.execv(python, [python, os.path.abspath(sys.argv[0])] + sys.argv[1:])
