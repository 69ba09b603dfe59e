#!/usr/bin/env bash
# The suites of `npm test`, after lint, typecheck and build: the main suite, then the sanitizer
# suite and the container suite side by side (docs/decisions/20261202-ci-side-by-side.md). The
# main suite keeps both cores to itself (its stacks measure latencies); the container suite
# starts one stack at a time, which leaves the sanitizer suite the other core.
# The container suite's output streams; the sanitizer suite's is shown whole once it ends,
# so that neither is cut into the other's lines. Fails when any suite fails.
set -uo pipefail
cd "$(dirname "$0")/.."

vitest run
main=$?

sanitizer_log=$(mktemp /tmp/gw-sanitizer-suite.XXXXXX)
vitest run --config test/containers/vitest.config.ts &
containers_pid=$!
vitest run --config test/sanitizers/vitest.config.ts >"$sanitizer_log" 2>&1
sanitizers=$?
echo "---- the sanitizer suite (ran beside the container suite; exit $sanitizers) ----"
cat "$sanitizer_log"
rm -f "$sanitizer_log"
echo "---- the container suite goes on ----"
wait "$containers_pid"
containers=$?
exit $((main || sanitizers || containers))
