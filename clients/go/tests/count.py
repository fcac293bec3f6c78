"""Reads `go test -json` output: prints each failed test's output and a
line per package, then "<label>: N passed, N failed, N skipped" over the
leaf tests (a test with subtests counts through them). The label is the
third argument (default clients/go; services/ratelimit/tests/run passes
its own)."""

import json
import sys

path, rc = sys.argv[1], int(sys.argv[2])
label = sys.argv[3] if len(sys.argv) > 3 else "clients/go"
results, output, packages = {}, {}, {}
with open(path, encoding="utf-8") as f:
    for line in f:
        try:
            ev = json.loads(line)
        except ValueError:
            print(line, end="")  # a build error, printed as is
            continue
        pkg, test, action = ev.get("Package", ""), ev.get("Test"), ev.get("Action")
        if action == "output":
            output.setdefault((pkg, test), []).append(ev.get("Output", ""))
        elif action in ("pass", "fail", "skip"):
            if test:
                results[(pkg, test)] = action
            else:
                packages[pkg] = (action, ev.get("Elapsed", 0))

leaves = {k: v for k, v in results.items()
          if not any(o[0] == k[0] and o[1].startswith(k[1] + "/") for o in results)}
counts = {"pass": 0, "fail": 0, "skip": 0}
for (pkg, test), action in sorted(leaves.items()):
    counts[action] += 1
    if action == "fail":
        print(f"--- FAIL {pkg} {test}")
        print("".join(output.get((pkg, test), [])), end="")
for pkg, (action, elapsed) in sorted(packages.items()):
    print(f"{label}: {action} {pkg} ({elapsed:.1f} s)")
    if action == "fail" and not any(a == "fail" and p == pkg for (p, _), a in leaves.items()):
        counts["fail"] += 1  # failed outside any test: TestMain, a build error
        print("".join(output.get((pkg, None), [])), end="")
if rc != 0 and counts["fail"] == 0:
    counts["fail"] = 1
    print(f"{label}: go test exited {rc} with no failing test: counted as 1 failed")
print(f"{label}: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
sys.exit(1 if counts["fail"] else 0)
