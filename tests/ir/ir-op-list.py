#!/usr/bin/env python3
"""The IR ops clinfer reads and writes, listed from the code.

Usage: ir-op-list.py SOURCE_ROOT [--check DOC]

Reads the translator tables of the IR reader (engine/frontend/ir/ir-ops.c
and ir-ops-<family>.c: one row per OpenVINO type and opset range) and the exporter
table of the IR writer (ir-export-shape.c: one row per engine op), and
prints both lists as the Markdown block that docs/model-formats.md holds
between the lines `<!-- ir-op-list begin -->` and `<!-- ir-op-list end -->`.
With --check DOC it exits 1 when that block of DOC differs (printing the
expected block), so the document cannot drift from the code.
"""

import os
import re
import sys

BEGIN, END = "<!-- ir-op-list begin -->", "<!-- ir-op-list end -->"
ROW = re.compile(r'(?:\{\s*|(?:BIN|ONE|REDUCE) \()"([A-Za-z0-9]+)",\s*(?:"[A-Za-z0-9]+",\s*)?'
                 r'(\d+|V)?')


def table(text, name):
    """The body of `... name[] = { ... };`."""
    start = text.index(name + "[] = {")
    return text[start:text.index("\n};", start)]


def reader_ops(root):
    ops = {}
    ir = os.path.join(root, "engine", "frontend", "ir")
    for f in sorted(os.listdir(ir)):
        if not (f.startswith("ir-ops") and f.endswith(".c")):
            continue
        with open(os.path.join(ir, f)) as fh:
            text = fh.read()
        names = re.findall(r"(clinfer_ir_ops_[a-z]+)\[\] = \{", text)
        body = "\n".join(table(text, n) for n in names)
        for line in body.splitlines():
            # Full rows: { "Type", since, last, ... }
            for m in re.finditer(r'\{ "([A-Za-z0-9]+)", (\d+), (\d+),', line):
                ops.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3))))
            # Macro rows: BIN ("Type", "Onnx", opset) from opset 1; ONE ("Type",
            # "Onnx", opset, since); REDUCE ("Type", "Onnx", since).
            for m in re.finditer(r'BIN \("([A-Za-z0-9]+)"', line):
                ops.setdefault(m.group(1), []).append((1, 0))
            for m in re.finditer(r'ONE \("([A-Za-z0-9]+)", "[A-Za-z0-9]+", \d+, (\d+)\)', line):
                ops.setdefault(m.group(1), []).append((int(m.group(2)), 0))
            for m in re.finditer(r'REDUCE \("([A-Za-z0-9]+)", "[A-Za-z0-9]+", (\d+)\)', line):
                ops.setdefault(m.group(1), []).append((int(m.group(2)), 0))
    return ops


def writer_ops(root):
    with open(os.path.join(root, "engine", "frontend", "ir", "ir-export-shape.c")) as fh:
        body = table(fh.read(), "exporters")
    return sorted(set(re.findall(r'\{ "([A-Za-z0-9]+)", [a-z_]+ \}', body)))


def render(root):
    ops = reader_ops(root)
    items = []
    for name in sorted(ops, key=str.lower):
        spans = []
        for since, last in sorted(ops[name]):
            if since == 1 and last == 0:
                continue
            spans.append("%d+" % since if last == 0 else "%d–%d" % (since, last))
        items.append(name + (" (opset %s)" % ", ".join(spans) if spans else ""))
    written = writer_ops(root)
    return "\n".join([
        BEGIN,
        "Read (%d OpenVINO types; opset 1 and later unless noted): %s." % (
            len(ops), ", ".join(items)),
        "",
        "Written (%d engine ops translated to OpenVINO opset layers; every other "
        "op is written in the `clinfer` extension opset): %s." % (
            len(written), ", ".join(written)),
        END,
    ])


def main():
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and sys.argv[2] != "--check"):
        print(__doc__.strip())
        return 2
    block = render(sys.argv[1])
    if len(sys.argv) == 2:
        print(block)
        return 0
    with open(sys.argv[3]) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        print("ir-op-list: %s has no %s ... %s block" % (sys.argv[3], BEGIN, END))
        return 1
    have = doc[doc.index(BEGIN):doc.index(END) + len(END)]
    if have != block:
        print("ir-op-list: the op lists in %s differ from the code; expected:\n%s" % (
            sys.argv[3], block))
        return 1
    print("ir-op-list: %s lists the ops of the code" % sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
