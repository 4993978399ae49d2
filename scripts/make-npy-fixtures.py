#!/usr/bin/python3
"""Writes the tiny .npy fixtures of tests/engine/test-npy.c with real numpy.

Usage: scripts/make-npy-fixtures.py [OUTDIR]   (default: tests/data/npy)
"""
import os
import sys

import numpy as np
from numpy.lib import format as npformat

TYPES = ["f2", "f4", "f8", "i1", "i2", "i4", "i8",
         "u1", "u2", "u4", "u8", "b1"]


def values(code):
    """Six values of dtype code, covering negatives and extremes."""
    dt = np.dtype(code)
    if dt.kind == "f":
        return np.array([0.0, -1.5, 2.25, 1000.0, -0.125, 65504.0], dtype=dt)
    if dt.kind == "b":
        return np.array([True, False, True, True, False, False], dtype=dt)
    info = np.iinfo(dt)
    return np.array([0, 1, info.max, info.min, 7, info.max - 1], dtype=dt)


def save(outdir, name, arr, version=None):
    with open(os.path.join(outdir, name), "wb") as f:
        if version is None:
            np.save(f, arr, allow_pickle=False)
        else:
            npformat.write_array(f, arr, version=version, allow_pickle=False)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "tests", "data", "npy")
    os.makedirs(outdir, exist_ok=True)
    for code in TYPES:
        save(outdir, "type_%s.npy" % code, values(code).reshape(2, 3))
    save(outdir, "scalar_f8.npy", np.array(3.5, dtype="<f8"))
    save(outdir, "vector_i4.npy", np.arange(5, dtype="<i4"))
    save(outdir, "empty_f4.npy", np.zeros((0, 3), dtype="<f4"))
    save(outdir, "v2_i2.npy", np.arange(6, dtype="<i2").reshape(3, 2), (2, 0))
    save(outdir, "v3_u2.npy", np.arange(4, dtype="<u2").reshape(1, 4), (3, 0))
    # Error cases.
    save(outdir, "bad_bigendian.npy", np.arange(3, dtype=">f4"))
    save(outdir, "bad_fortran.npy",
         np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
    save(outdir, "bad_complex.npy", np.arange(2, dtype="<c8"))
    with open(os.path.join(outdir, "type_f4.npy"), "rb") as f:
        good = f.read()
    with open(os.path.join(outdir, "bad_truncated.npy"), "wb") as f:
        f.write(good[:-5])
    with open(os.path.join(outdir, "bad_extra.npy"), "wb") as f:
        f.write(good + b"\0\0\0\0")
    with open(os.path.join(outdir, "bad_magic.npy"), "wb") as f:
        f.write(b"\x93NUMPX" + good[6:])


if __name__ == "__main__":
    main()
