#!/usr/bin/env python3
"""Checks the engine's layering (docs/architecture.md, "Layers"): every
#include "..." of a file under engine/LAYER/ names a header of LAYER or of
a layer before it in LAYERS, the public headers include only <clinfer/...>
headers, and the plugin (gst/) and the examples include no engine header
but the public ones. Prints each violation as FILE:LINE: ... and exits 1
when there is one.

usage: check-layers.py SOURCE_ROOT
       check-layers.py --self-test   (checks that violations are caught)"""
import os
import re
import shutil
import sys
import tempfile

# Lowest first: a layer may include itself and the layers before it.
LAYERS = ['core', 'ops', 'passes', 'frontend', 'plan', 'devices', 'runtime',
          'tools']
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def sources(top):
    for d, dirs, files in os.walk(top):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(('.c', '.h')) and not f.endswith('.pb-c.c') \
                    and not f.endswith('.pb-c.h'):
                yield os.path.join(d, f)


def includes(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        text = f.read()
    for m in INCLUDE.finditer(text):
        yield text.count('\n', 0, m.start()) + 1, m.group(1), m.group(2)


def check(root):
    bad = []
    engine = os.path.join(root, 'engine')
    for path in sources(engine):
        rel = os.path.relpath(path, root)
        parts = os.path.relpath(path, engine).split(os.sep)
        layer = parts[0]
        for line, kind, name in includes(path):
            target = name.split('/')[0]
            if layer == 'include':
                if kind == '"' and not name.startswith('clinfer/'):
                    bad.append('%s:%d: public header includes "%s" (only '
                               '<clinfer/...> and system headers)'
                               % (rel, line, name))
                continue
            if layer not in LAYERS or kind != '"' or target not in LAYERS:
                continue
            if LAYERS.index(target) > LAYERS.index(layer):
                bad.append('%s:%d: layer %s includes "%s" of layer %s, '
                           'which is above it' % (rel, line, layer, name,
                                                  target))
    for top in ('gst', 'examples'):
        for path in sources(os.path.join(root, top)):
            rel = os.path.relpath(path, root)
            for line, kind, name in includes(path):
                if name.split('/')[0] in LAYERS + ['include']:
                    bad.append('%s:%d: %s/ includes engine internal "%s" '
                               '(public <clinfer/...> headers only)'
                               % (rel, line, top, name))
    return bad


def self_test():
    tmp = tempfile.mkdtemp()
    try:
        def write(rel, text):
            p = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, 'w') as f:
                f.write(text)
        write('engine/core/a.c', '#include "core/a.h"\n#include <glib.h>\n')
        write('engine/runtime/b.c', '#include "devices/d.h"\n#include "core/a.h"\n')
        write('gst/e.c', '#include <clinfer/clinfer.h>\n#include "gste.h"\n')
        assert check(tmp) == [], check(tmp)
        write('engine/core/up.c', '#include "ops/op.h"\n')
        write('engine/plan/up.h', '/* x */\n#  include "runtime/runtime.h"\n')
        write('engine/include/clinfer/p.h', '#include "core/graph.h"\n')
        write('gst/f.c', '#include "devices/device.h"\n')
        got = check(tmp)
        want = ['engine/core/up.c:1:', 'engine/include/clinfer/p.h:1:',
                'engine/plan/up.h:2:', 'gst/f.c:1:']
        assert [g.split(' ')[0] for g in got] == want, got
    finally:
        shutil.rmtree(tmp)
    print('self-test: 4 planted violations found, none in a clean tree')
    return 0


def main(argv):
    if argv == ['--self-test']:
        return self_test()
    if len(argv) != 1:
        sys.stderr.write(__doc__)
        return 2
    bad = check(argv[0])
    for b in bad:
        print(b)
    print('%d include(s) cross a layer upward' % len(bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
