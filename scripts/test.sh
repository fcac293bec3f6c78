#!/usr/bin/env bash
# `make test`: cargo's test binaries (the unit and property tests of src/,
# and tests/it/, the one crate of real-server tests), then
# scripts/check-memory.sh, then the client packages' and services' tests
# (clients/*/tests/run, services/*/tests/run),
# then make dist and the release files' tests (tests/dist/run), then the docs
# examples (tests/docs/run), all run
# even when one fails; ends with one line over all of them, "N passed, N
# failed, N skipped": cargo's tests and the docs examples one by one,
# check-memory as one; skipped counts cargo's ignored tests and the docs
# blocks marked skip. Exits non-zero if anything failed. Log: target/test.log.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p target
log=target/test.log
: >"$log"

cargo test --release --no-fail-fast -- --test-threads=2 2>&1 | tee -a "$log"
cargo_rc=${PIPESTATUS[0]}
# cargo: "     Running tests/it/main.rs (...)" per test binary, then its
# "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; ...".
read -r passed failed ignored binaries ran < <(awk '/^test result:/ { p += $4; f += $6; i += $8; n++ }
    /^ +Running / { r++ }
    END { print p + 0, f + 0, i + 0, n + 0, r + 0 }' "$log")
notes=("cargo test: $binaries test binaries reported: $passed passed, $failed failed, $ignored ignored")
if [ "$ran" -gt "$binaries" ]; then
    # A binary that started and reported nothing crashed: one failure each
    # (a crash of tests/it takes every real-server result with it).
    failed=$((failed + ran - binaries))
    notes+=("cargo test: $((ran - binaries)) of $ran test binaries ended without a result (crashed, above): counted as failed")
elif [ "$cargo_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
    # Nothing reported failing, yet cargo failed: a build error. Count it, so
    # the closing line cannot read as a clean run.
    failed=$((failed + 1))
    notes+=("cargo test exited $cargo_rc with no failing test (a build error, above): counted as 1 failed")
fi

scripts/check-memory.sh 2>&1 | tee -a "$log"
if [ "${PIPESTATUS[0]}" -eq 0 ]; then
    passed=$((passed + 1))
    notes+=("check-memory: passed")
else
    failed=$((failed + 1))
    notes+=("check-memory: FAILED")
fi

# The client packages' tests (clients/<language>/tests/run) and the
# services' (services/<name>/tests/run: rl-ratelimit against
# envoyproxy/ratelimit): each installs what it needs from the registries,
# starts its own servers, and ends with "<folder>: N passed, N failed, N
# skipped".
for run in clients/*/tests/run services/*/tests/run; do
    [ -x "$run" ] || continue
    name=${run%/tests/run}
    "$run" 2>&1 | tee -a "$log"
    rc=${PIPESTATUS[0]}
    read -r c_passed c_failed c_skipped < <(awk -v n="$name:" '$1 == n && $3 == "passed," { p = $2; f = $4; s = $6 }
        END { print p + 0, f + 0, s + 0 }' "$log")
    if [ "$rc" -ne 0 ] && [ "$c_failed" -eq 0 ]; then
        c_failed=1
    fi
    passed=$((passed + c_passed))
    failed=$((failed + c_failed))
    ignored=$((ignored + c_skipped))
    notes+=("$name: $c_passed passed, $c_failed failed, $c_skipped skipped")
done

# The release files: make dist, then tests/dist/run installs and runs them
# from a folder with no checkout ("dist: N passed, N failed, N skipped"). A
# make dist that fails is one failure, and its files are not tested.
scripts/dist.sh 2>&1 | tee -a "$log"
if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    failed=$((failed + 1))
    notes+=("make dist: FAILED (above), the release files not tested")
else
    tests/dist/run 2>&1 | tee -a "$log"
    rc=${PIPESTATUS[0]}
    read -r d_passed d_failed d_skipped < <(awk '$1 == "dist:" && $3 == "passed," { p = $2; f = $4; s = $6 }
        END { print p + 0, f + 0, s + 0 }' "$log")
    if [ "$rc" -ne 0 ] && [ "$d_failed" -eq 0 ]; then
        d_failed=1
    fi
    passed=$((passed + d_passed))
    failed=$((failed + d_failed))
    ignored=$((ignored + d_skipped))
    notes+=("release files (make dist, tests/dist/run): $d_passed passed, $d_failed failed, $d_skipped skipped")
fi

# The docs examples: "docs: N skipped, T s", then "docs: N snippets/sessions
# passed, M failed".
tests/docs/run 2>&1 | tee -a "$log"
docs_rc=${PIPESTATUS[0]}
read -r docs_passed docs_failed docs_skipped < <(awk '/^docs: [0-9]+ snippets\/sessions passed/ { p = $2; f = $5 }
    /^docs: [0-9]+ skipped/ { s = $2 }
    END { print p + 0, f + 0, s + 0 }' "$log")
if [ "$docs_rc" -ne 0 ] && [ "$docs_failed" -eq 0 ]; then
    docs_failed=1
fi
passed=$((passed + docs_passed))
failed=$((failed + docs_failed))
notes+=("docs examples: $docs_passed passed, $docs_failed failed, $docs_skipped skipped")

echo
printf 'make test: %s\n' "${notes[@]}"
echo "$passed passed, $failed failed, $((ignored + docs_skipped)) skipped"
[ "$failed" -eq 0 ]
