#!/usr/bin/env python3
"""Regenerates the IR seeds of the fuzz target (tests/fuzz/ir-corpus/*.ir).

Usage: make-seeds.py CLINFER_RUN CLINFER_CONVERT [OUT_DIR]

Runs tests/ir/check-ir-ops.py --keep, which writes one small IR per op
group with OpenVINO (openvino.save_model) and the same model written back by
clinfer-convert (*-rt.xml), and packs each .xml and its .bin into one seed
in the fuzz target's input format: the XML, a line "--clinfer-bin--", then
the .bin bytes. OUT_DIR defaults to tests/fuzz/ir-corpus. Needs what
check-ir-ops.py needs (openvino, numpy).
"""

import os
import subprocess
import sys
import tempfile

SEPARATOR = b"\n--clinfer-bin--\n"


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip())
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[3] if len(sys.argv) == 4 else os.path.join(here, "ir-corpus")
    check = os.path.join(here, "..", "ir", "check-ir-ops.py")
    with tempfile.TemporaryDirectory(prefix="clinfer-seeds-") as tmp:
        subprocess.run([sys.executable, check, sys.argv[1], sys.argv[2], "--keep", tmp],
                       check=True, stdout=subprocess.DEVNULL)
        n = 0
        for name in sorted(os.listdir(tmp)):
            if not name.endswith(".xml"):
                continue
            stem = name[:-4]
            with open(os.path.join(tmp, name), "rb") as f:
                data = f.read()
            bin_path = os.path.join(tmp, stem + ".bin")
            if os.path.exists(bin_path):
                with open(bin_path, "rb") as f:
                    data += SEPARATOR + f.read()
            prefix = "clinfer-" if stem.endswith("-rt") else "openvino-"
            seed = prefix + (stem[:-3] if stem.endswith("-rt") else stem) + ".ir"
            with open(os.path.join(out, seed), "wb") as f:
                f.write(data)
            n += 1
    print("make-seeds: %d seeds in %s" % (n, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
