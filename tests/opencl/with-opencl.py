#!/usr/bin/python3
"""Runs a command only when an OpenCL device exists.

Usage: with-opencl.py CLINFER_RUN COMMAND [ARG...]

Asks `CLINFER_RUN --list-devices` for GPU.N devices; with none, prints why
and exits 77 (meson: skipped); otherwise runs COMMAND and exits with its
status.
"""

import subprocess
import sys


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    proc = subprocess.run([argv[1], "--list-devices"], stdout=subprocess.PIPE,
                          universal_newlines=True)
    if not any(line.startswith("GPU.") for line in proc.stdout.splitlines()):
        print("no OpenCL device (clinfer-run --list-devices lists no GPU.N): skipped")
        return 77
    return subprocess.call(argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
