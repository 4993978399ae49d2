#!/usr/bin/env python3
"""Makes a folder of links to the system GStreamer plugins the element
tests use, so GST_PLUGIN_PATH loads just those and not every installed
plugin (with GST_REGISTRY_FORK=no a plugin's load-time allocations would
be the test's leaks, and a broken one its crash).

usage: link-plugins.py SYSTEM_PLUGIN_DIR OUT_DIR NAME...
NAME is a plugin's library name without "libgst" and ".so"; one that is
not installed is left out (its tests then fail on the missing element,
naming it)."""
import os
import sys


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    sysdir, outdir, names = argv[0], argv[1], argv[2:]
    os.makedirs(outdir, exist_ok=True)
    for entry in os.listdir(outdir):
        os.unlink(os.path.join(outdir, entry))
    found = []
    for name in names:
        lib = 'libgst%s.so' % name
        src = os.path.join(sysdir, lib)
        if os.path.exists(src):
            os.symlink(src, os.path.join(outdir, lib))
            found.append(name)
    print(' '.join(found))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
