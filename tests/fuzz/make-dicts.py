#!/usr/bin/env python3
"""Writes the ONNX dictionary of the fuzz-onnx target (tests/fuzz/onnx.dict).

Usage: /usr/bin/python3 make-dicts.py [OUT]   (needs the onnx package)

libFuzzer splices dictionary entries into inputs. A ModelProto is
protobuf, so entries are what mutations of raw bytes rarely produce: the
names of every ONNX operator and attribute as length-prefixed protobuf
strings (field 4 "op_type" of NodeProto, field 1 "name" of
AttributeProto), the bare names, and the tag bytes of the fields that
carry shapes, types and data.
"""

import os
import sys

import onnx
from onnx import defs


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(tag, wire, payload=b""):
    return varint((tag << 3) | wire) + payload


def ld(tag, data):
    return field(tag, 2, varint(len(data)) + data)


def esc(b):
    return "".join("\\x%02x" % c for c in b)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "onnx.dict")
    ops, attrs = set(), set()
    for s in defs.get_all_schemas_with_history():
        ops.add(s.name)
        attrs.update(s.attributes.keys())
    entries = []
    for op in sorted(ops):
        entries.append(("op_%s" % op, ld(4, op.encode())))
    for a in sorted(attrs):
        entries.append(("attr_%s" % a, ld(1, a.encode())))
    # Interesting varints, as dims (TensorShapeProto.Dimension.dim_value,
    # field 1), TensorProto.dims (field 1) and data types (field 2).
    for n in (0, 1, 2, 3, 7, 255, 65535, 1 << 31, (1 << 63) - 1, (1 << 64) - 1):
        entries.append(("dim_%d" % n, field(1, 0, varint(n))))
    for t in range(0, 24):
        entries.append(("dtype_%d" % t, field(2, 0, varint(t))))
    # Negative int64 (10-byte varint) for axes and pads.
    entries.append(("neg1", field(3, 0, varint((1 << 64) - 1))))
    with open(out, "w") as f:
        f.write("# ONNX operator and attribute names as protobuf fields, and\n")
        f.write("# varints; written by make-dicts.py (onnx %s).\n" % onnx.__version__)
        for name, data in entries:
            f.write('%s="%s"\n' % (name.replace(".", "_"), esc(data)))
    print("make-dicts: %d entries in %s" % (len(entries), out))


if __name__ == "__main__":
    main()
