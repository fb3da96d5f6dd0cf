#!/usr/bin/env python3
"""Lists the checks a ctest run skipped and why: skipped tests (the reason
GoogleTest or the script printed) and checks a passing script skipped (its
"skipped: ..." lines). Usage: scripts/skipped.py BUILD_DIR [LABEL]"""
import re
import sys

build = sys.argv[1]
label = sys.argv[2] if len(sys.argv) > 2 else build
try:
    log = open(f"{build}/Testing/Temporary/LastTest.log", errors="replace").read()
except OSError:
    sys.exit(0)
found = []
for block in re.split(r"\n(?=\d+/\d+ Testing: )", log):
    m = re.match(r"\d+/\d+ Testing: (\S+)", block)
    if not m:
        continue
    name, out = m.group(1), block.split("<end of output>")[0]
    lines = out.splitlines()
    for i, line in enumerate(lines):
        reason = None
        if re.search(r": Skipped$", line) and i + 1 < len(lines):  # GTEST_SKIP() << reason
            reason = lines[i + 1].strip() or "(no reason given)"
        elif re.match(r"\s*(skipped|SKIP):", line):
            reason = line.split(":", 1)[1].strip()
        if reason:
            found.append(f"  {name}: {reason}")
print(f"== skipped checks ({label}): {len(found) or 'none'}")
for f in found:
    print(f)
