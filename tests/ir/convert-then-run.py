#!/usr/bin/python3
"""clinfer-run through an IR: converts MODEL with clinfer-convert, then runs clinfer-run on the IR.

Usage: convert-then-run.py MODEL [clinfer-run options...]
Environment: CLINFER_CONVERT and CLINFER_RUN give the two tools.

A drop-in for clinfer-run in tests/conformance/run-with-cli.py and
tests/models/check-golden.py, so that they measure the round trip
MODEL -> clinfer-convert -> IR -> clinfer-run with their own counts. The IR
is written to a temporary folder; a conversion failure is reported on stderr
with exit status 1, like a clinfer-run failure.
"""

import os
import subprocess
import sys
import tempfile


def main():
    convert, run = os.environ.get("CLINFER_CONVERT"), os.environ.get("CLINFER_RUN")
    if not convert or not run or len(sys.argv) < 2:
        sys.stderr.write("convert-then-run: set CLINFER_CONVERT and CLINFER_RUN; "
                         "usage: convert-then-run.py MODEL [options]\n")
        return 2
    model, rest = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory(prefix="clinfer-ctr-") as tmp:
        xml = os.path.join(tmp, "model.xml")
        proc = subprocess.run([convert, model, "--output", xml], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            return 1
        return subprocess.run([run, xml] + rest).returncode


if __name__ == "__main__":
    sys.exit(main())
