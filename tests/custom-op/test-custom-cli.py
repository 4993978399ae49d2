#!/usr/bin/python3
"""--custom-lib in the tools (suite tools): clinfer-run on the example model
against the numpy reference, clinfer-benchmark, and clinfer-convert to IR
then clinfer-run on the IR; a library overriding built-in ops
(tests/custom-op/override-ops.c) through clinfer-run and IR. TAP output.

Usage: test-custom-cli.py BUILD_ROOT SOURCE_ROOT LIBRARY OVERRIDE_LIBRARY
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

n = 0
failed = 0


def check(ok, what, detail=""):
    global n, failed
    n += 1
    failed += 0 if ok else 1
    print("%s %d - %s%s" % ("ok" if ok else "not ok", n, what,
                            "" if ok else " # " + detail.replace("\n", " ")))
    sys.stdout.flush()


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def compare(out_dir, data, what):
    scores = np.load(os.path.join(out_dir, "output_0.npy"))
    indices = np.load(os.path.join(out_dir, "output_1.npy"))
    want_s = np.load(os.path.join(data, "example-scores.npy"))
    want_i = np.load(os.path.join(data, "example-indices.npy"))
    check(scores.shape == want_s.shape
          and np.allclose(scores, want_s, rtol=1e-5, atol=1e-5),
          what + ": scores match numpy", "%s vs %s" % (scores, want_s))
    check(indices.dtype == np.int64 and np.array_equal(indices, want_i),
          what + ": indices match numpy", "%s vs %s" % (indices, want_i))


def run_and_compare(tools, model, lib, x, out_dir, data, what):
    rc, out, err = run([os.path.join(tools, "clinfer-run"), model,
                        "--custom-lib", lib, "--input", x,
                        "--output-dir", out_dir])
    check(rc == 0, what + ": clinfer-run --custom-lib exits 0", err)
    if rc == 0:
        compare(out_dir, data, what)
    else:
        check(False, what + ": scores")
        check(False, what + ": indices")


OVERRIDE_OUTPUTS = ["relu", "tanh", "abs", "chain", "mixed", "conv_relu",
                    "conv_bn_relu", "conv_residual", "conv_bias", "conv_tanh"]


# An IR convolution has no bias input: its bias (and a batch norm folded
# into it) is an Add layer, which the library overrides too.
IR_BIAS_ADD = {"conv_relu": 100, "conv_bn_relu": 100, "conv_residual": 100}


def run_override(tools, model, lib, data, out_dir, what, extra=None):
    """clinfer-run MODEL with the overriding library: every output is the
    override's result (make-reference.py, plus @extra), none the built-in
    one's."""
    rc, out, err = run([os.path.join(tools, "clinfer-run"), model,
                        "--custom-lib", lib, "--input",
                        "x=" + os.path.join(data, "override-x.npy"),
                        "--output-dir", out_dir])
    bad = [] if rc == 0 else ["exit %d: %s" % (rc, err)]
    for i, name in enumerate(OVERRIDE_OUTPUTS if rc == 0 else []):
        got = np.load(os.path.join(out_dir, "output_%d.npy" % i))
        want = np.load(os.path.join(data, "override-%d-%s.npy" % (i, name)))
        want = want + np.float32((extra or {}).get(name, 0))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4,
                                                      atol=1e-4):
            bad.append("%s: max diff %g" % (name, np.abs(got - want).max()))
    check(not bad, what + ": every output is the override's", "; ".join(bad))


def override_tests(tools, lib, data, tmp):
    model = os.path.join(data, "override.onnx")
    run_override(tools, model, lib, data, os.path.join(tmp, "ov-onnx"),
                 "override, ONNX")
    # Converted without the library: IR ReLU/Tanh/Abs/Add layers, which
    # the library overrides when the IR is read with it.
    plain = os.path.join(tmp, "override-plain.xml")
    rc, out, err = run([os.path.join(tools, "clinfer-convert"), model,
                        "--output", plain])
    check(rc == 0, "override model converts without the library", err)
    run_override(tools, plain, lib, data, os.path.join(tmp, "ov-plain"),
                 "override, IR converted without the library", IR_BIAS_ADD)
    # Converted with it: no pass fused an overridden op away, so the IR
    # still has a ReLU layer per Relu node.
    with_lib = os.path.join(tmp, "override-lib.xml")
    rc, out, err = run([os.path.join(tools, "clinfer-convert"), model,
                        "--custom-lib", lib, "--output", with_lib])
    n_relu = open(with_lib).read().count('type="ReLU"') if rc == 0 else -1
    check(rc == 0 and n_relu == 5,
          "converted with the library: 5 ReLU layers kept", "%d: %s" % (n_relu, err))
    run_override(tools, with_lib, lib, data, os.path.join(tmp, "ov-lib"),
                 "override, IR converted with the library", IR_BIAS_ADD)


def tool_details(tools, build, src, lib, data, tmp):
    """The smaller things a new user hit: the same library twice, an
    --output folder that does not exist, log lines on stderr, a library
    built with the build tree's pkg-config file."""
    model = os.path.join(src, "examples", "custom-op", "example.onnx")
    x = "x=" + os.path.join(data, "example-x.npy")
    rc, out, err = run([os.path.join(tools, "clinfer-run"), model,
                        "--custom-lib", lib, "--custom-lib", lib, "--input", x])
    check(rc == 0 and out.count("output ") == 2,
          "the same --custom-lib twice is loaded once", err)
    xml = os.path.join(tmp, "new", "folder", "example.xml")
    rc, out, err = run([os.path.join(tools, "clinfer-convert"), model,
                        "--custom-lib", lib, "--output", xml])
    check(rc == 0 and os.path.exists(xml),
          "clinfer-convert creates the --output folder", err)
    check("2 layers (" in err and "have no OpenVINO equivalent and are" in err,
          "the extension-layer warning counts in plural", err)
    # G_MESSAGES_DEBUG=clinfer: the per-node log lines on stderr, stdout
    # only the documented output lines.
    env = dict(os.environ, G_MESSAGES_DEBUG="clinfer")
    p = subprocess.run([os.path.join(tools, "clinfer-run"), model,
                        "--custom-lib", lib, "--input", x],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=env, timeout=300)
    lines = p.stdout.splitlines()
    check(p.returncode == 0 and len(lines) == 2
          and all(line.startswith("output ") for line in lines)
          and "clinfer-INFO" in p.stderr,
          "log lines go to stderr, stdout has the output lines only",
          p.stdout + p.stderr)
    # pkg-config on the build tree: public headers only, and a library
    # that loads without LD_LIBRARY_PATH.
    pc_env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(build, "engine"))
    pc_env.pop("LD_LIBRARY_PATH", None)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "clinfer"],
                           stdout=subprocess.PIPE, universal_newlines=True,
                           env=pc_env).stdout.split()
    incs = [f[2:] for f in flags if f.startswith("-I")]
    engine_src = os.path.join(src, "engine")
    bad = [d for d in incs if d.startswith(engine_src)
           and d != os.path.join(engine_src, "include")]
    check(flags and not bad and os.path.join(engine_src, "include") in incs,
          "uninstalled clinfer.pc: the public include folder only",
          " ".join(flags))
    so = os.path.join(tmp, "libpc-example.so")
    cc = subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", so,
                         os.path.join(src, "examples", "custom-op",
                                      "example-ops.c")] + flags + ["-lm"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        universal_newlines=True, env=pc_env)
    p = subprocess.run([os.path.join(tools, "clinfer-convert"), model,
                        "--custom-lib", so, "--output",
                        os.path.join(tmp, "pc.xml")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=pc_env, timeout=300)
    check(cc.returncode == 0 and p.returncode == 0,
          "a library built with the uninstalled clinfer.pc loads",
          cc.stdout + p.stderr)


def main():
    build, src, lib, override_lib = sys.argv[1:5]
    tools = os.path.join(build, "engine", "tools")
    model = os.path.join(src, "examples", "custom-op", "example.onnx")
    data = os.path.join(src, "tests", "custom-op", "data")
    x = "x=" + os.path.join(data, "example-x.npy")
    with tempfile.TemporaryDirectory() as tmp:
        run_and_compare(tools, model, lib, x, os.path.join(tmp, "run"), data,
                        "clinfer-run")
        rc, out, err = run([os.path.join(tools, "clinfer-benchmark"), model,
                            "--custom-lib", lib, "--iterations", "5"])
        check(rc == 0 and "median_ms=" in out,
              "clinfer-benchmark --custom-lib runs", err)
        xml = os.path.join(tmp, "example.xml")
        rc, out, err = run([os.path.join(tools, "clinfer-convert"), model,
                            "--custom-lib", lib, "--output", xml])
        check(rc == 0 and os.path.exists(xml),
              "clinfer-convert --custom-lib writes the IR", err)
        run_and_compare(tools, xml, lib, x, os.path.join(tmp, "ir"), data,
                        "converted IR")
        rc, out, err = run([os.path.join(tools, "clinfer-run"), model,
                            "--input", x])
        check(rc == 1 and "com.example.ScaledTanh" in err
              and "custom-lib" in err and len(err.strip().splitlines()) == 1,
              "without --custom-lib: one line naming the unknown op", err)
        override_tests(tools, override_lib, data, tmp)
        tool_details(tools, build, src, lib, data, tmp)
    print("1..%d" % n)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
