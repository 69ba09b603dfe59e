#!/usr/bin/env bash
# The nginx module's libFuzzer targets (nginx-module/fuzz/, docs/decisions/20261125-hit-in-c.md):
# its pure parts (the parsers in ngx_http_gateway_hit_parse_*.c, one per target, the permissions
# in _permissions.c, the worker's tables in _records.c and _usage.c)
# built with Debian's clang-14 and libFuzzer, with
# AddressSanitizer and UndefinedBehaviorSanitizer, into build/fuzz/.
#
#   bash scripts/fuzz-nginx-module.sh build                # builds every target, lists them
#   bash scripts/fuzz-nginx-module.sh run TARGET SECONDS   # runs one from its seed corpus
#
# A run starts from the seed corpus in the repository (nginx-module/fuzz/corpus/TARGET/, read
# only) and keeps what it finds in build/fuzz/corpus/TARGET/; it exits non-zero on any crash,
# leak or sanitizer report (the input is left in build/fuzz/). Needs clang-14, libfuzzer-14-dev,
# libclang-rt-14-dev and libssl-dev (scripts/ensure-system.sh installs them).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/nginx-module"
OUT="$ROOT/build/fuzz"
TARGETS=(fuzz_screen fuzz_api_key fuzz_records fuzz_limit fuzz_worker_tables fuzz_path)
# The module's pure parts (no nginx types), as nginx-module/config lists them: every target
# links them all.
PURE=(ngx_http_gateway_hit_parse_screen.c ngx_http_gateway_hit_parse_path.c
  ngx_http_gateway_hit_parse_api_key.c ngx_http_gateway_hit_parse_limit.c
  ngx_http_gateway_hit_parse_records.c ngx_http_gateway_hit_permissions.c
  ngx_http_gateway_hit_records.c ngx_http_gateway_hit_usage.c)
CC="${FUZZ_CC:-clang-14}"

die() {
  printf '[fuzz] %s\n' "$*" >&2
  exit 1
}

build() {
  command -v "$CC" >/dev/null || die "$CC is not installed (apt-get install clang-14 libfuzzer-14-dev libclang-rt-14-dev)"
  mkdir -p "$OUT"
  for target in "${TARGETS[@]}"; do
    # -fno-sanitize-recover: undefined behaviour stops the run like a crash does.
    "$CC" -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
      -fno-sanitize-recover=all -I"$SRC" \
      "${PURE[@]/#/$SRC/}" "$SRC/fuzz/$target.c" -lcrypto -o "$OUT/$target.tmp"
    mv "$OUT/$target.tmp" "$OUT/$target"
    printf '%s\n' "$OUT/$target"
  done
}

run() {
  local target="$1" seconds="$2"
  [[ -x "$OUT/$target" ]] || die "$target is not built (bash scripts/fuzz-nginx-module.sh build)"
  [[ -d "$SRC/fuzz/corpus/$target" ]] || die "no seed corpus for $target"
  mkdir -p "$OUT/corpus/$target" "$OUT/artifacts"
  cd "$OUT"
  # New inputs go to the first directory; the seeds are only read.
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "./$target" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=1024 \
    -artifact_prefix="$OUT/artifacts/$target-" \
    "$OUT/corpus/$target" "$SRC/fuzz/corpus/$target"
}

case "${1:-}" in
build) build ;;
run) run "${2:?target}" "${3:?seconds}" ;;
*) die "usage: $0 build | run TARGET SECONDS" ;;
esac
