#!/usr/bin/python3
"""Runs a command with oclgrind as the only OpenCL platform and fails on
any error oclgrind reports.

Usage: with-oclgrind.py COMMAND [ARG...]

oclgrind (Debian package `oclgrind`) simulates an OpenCL device and checks
every memory access of every work-item. This script writes a vendors folder
with one .icd file naming oclgrind's ICD library, points OCL_ICD_VENDORS at
it, sets OCLGRIND_CHECK_API=1 (API misuse is reported too) and runs
COMMAND with its output passed through. The run fails when COMMAND fails or
when the output holds any oclgrind report: an invalid or uninitialised
access, a runtime (API) error, or a fatal error.

Exit status: COMMAND's, 1 when oclgrind reported something, 77 (meson:
skipped) when oclgrind is not installed (with --tap among the arguments: a
TAP plan that skips, exit status 0).
"""

import os
import subprocess
import sys
import tempfile

ICD_PATHS = [
    "/usr/lib/oclgrind/liboclgrind-rt-icd.so",
    "/usr/lib/x86_64-linux-gnu/oclgrind/liboclgrind-rt-icd.so",
    "/usr/local/lib/liboclgrind-rt-icd.so",
]

# Start of each kind of report oclgrind prints.
MARKERS = (
    "Invalid read",
    "Invalid write",
    "Uninitialized value",
    "Oclgrind - OpenCL runtime error detected",
    "OCLGRIND FATAL ERROR",
    "Read-write data race",
    "Write-write data race",
    "Work-group divergence detected",
    "Invalid memory access",
)


# API errors a test provokes on purpose (a custom kernel that does not
# compile, whose error message the test checks): (function, error).
EXPECTED_API_ERRORS = {("clBuildProgram", "CL_BUILD_PROGRAM_FAILURE")}


def find_reports(lines):
    """The first line of each oclgrind report that is not expected."""
    reports = []
    for i, line in enumerate(lines):
        if not line.strip().startswith(MARKERS):
            continue
        detail = dict(l.strip().split(":", 1) for l in lines[i + 1:i + 3]
                      if ":" in l)
        key = (detail.get("Function", "").strip(),
               detail.get("Error", "").strip())
        if line.strip().startswith("Oclgrind - OpenCL runtime error") \
                and key in EXPECTED_API_ERRORS:
            continue
        reports.append(line)
    return reports


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    icd = next((p for p in ICD_PATHS if os.path.exists(p)), None)
    if icd is None:
        if "--tap" in argv:
            # a TAP test (meson protocol 'tap') is skipped by its plan
            print("1..0 # SKIP oclgrind is not installed (apt-get install oclgrind)")
            return 0
        print("oclgrind is not installed (apt-get install oclgrind): skipped")
        return 77
    with tempfile.TemporaryDirectory(prefix="clinfer-oclgrind-") as vendors:
        with open(os.path.join(vendors, "oclgrind.icd"), "w") as f:
            f.write(icd + "\n")
        env = dict(os.environ)
        env["OCL_ICD_VENDORS"] = vendors
        env["OCLGRIND_CHECK_API"] = "1"
        # Programs built by another implementation are not oclgrind's.
        cache = env.get("CLINFER_CACHE_DIR")
        if cache:
            env["CLINFER_CACHE_DIR"] = cache + "-oclgrind"
        proc = subprocess.run(argv[1:], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE,
                              universal_newlines=True, errors="replace")
    # Passed through as they came (stdout may be TAP); oclgrind writes its
    # reports to stderr.
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    reports = find_reports(proc.stderr.splitlines())
    reports += find_reports(proc.stdout.splitlines())
    if reports:
        sys.stderr.write("with-oclgrind.py: oclgrind reported %d error(s); "
                         "first: %s\n" % (len(reports), reports[0].strip()))
        return 1
    if proc.returncode != 0:
        sys.stderr.write("with-oclgrind.py: command exited with status %d\n"
                         % proc.returncode)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
