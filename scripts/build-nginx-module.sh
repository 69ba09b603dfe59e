#!/usr/bin/env bash
# Builds the gateway's nginx module (nginx-module/, docs/decisions/20261125-hit-in-c.md) against
# the nginx installed on this machine, with Debian's nginx-dev: the packaged nginx's own
# configure flags (--with-compat), so the module loads into it. A quick no-op when the module
# is already built for this nginx and these sources.
#
#   bash scripts/build-nginx-module.sh [OUT_DIR]    # default: build/nginx-module
#
# Needs nginx-dev gcc make libc6-dev libpcre2-dev libssl-dev zlib1g-dev (scripts/ensure-system.sh
# installs them). Prints the module's path on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/build/nginx-module}"
SRC=/usr/share/nginx/src
MODULE=ngx_http_gateway_hit_module.so

die() {
  printf '[nginx-module] %s\n' "$*" >&2
  exit 1
}
[[ -f "$SRC/conf_flags" ]] || die "needs Debian's nginx-dev ($SRC/conf_flags is missing)"
command -v nginx >/dev/null || die "nginx is not installed"
for tool in gcc make; do command -v "$tool" >/dev/null || die "$tool is not installed"; done

# The compiler's flags: -O2, or a sanitizer build's (test/sanitizers: MODULE_CC_OPT and
# MODULE_LD_OPT, into an OUT_DIR of its own).
CC_OPT="${MODULE_CC_OPT:--O2}"
LD_OPT="${MODULE_LD_OPT:-}"
# The module calls lua-nginx-module's private functions: the package's version is part of what
# it is built for (and the module switches itself off at start for a Lua module version other
# than the one it was tested with, NGINX_MODULE.luaModuleVersion in common/contract.ts).
lua_module="$(dpkg-query -W -f='${Version}' libnginx-mod-http-lua 2>/dev/null || echo unknown)"
# What the module is built from: this nginx (version and flags), the Lua module, the flags and
# the module's sources.
stamp="$({ nginx -V 2>&1; echo "$lua_module $CC_OPT $LD_OPT"; cat "$SRC/conf_flags" "$ROOT"/nginx-module/*.[ch] "$ROOT/nginx-module/config" "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-16) lua-nginx-module $lua_module"
if [[ -f "$OUT/$MODULE" && "$(cat "$OUT/stamp" 2>/dev/null)" == "$stamp" ]]; then
  printf '%s\n' "$OUT/$MODULE"
  exit 0
fi

mkdir -p "$OUT"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$SRC" "$work/nginx"
# shellcheck disable=SC1091
. "$SRC/conf_flags"
if ! (cd "$work/nginx" && ./configure "${NGX_CONF_FLAGS[@]}" --with-cc-opt="$CC_OPT" --with-ld-opt="$LD_OPT" \
  --add-dynamic-module="$ROOT/nginx-module" >"$work/configure.log" 2>&1 &&
  make -f objs/Makefile modules >"$work/make.log" 2>&1); then
  tail -n 40 "$work/configure.log" "$work/make.log" >&2 2>/dev/null || true
  die "building the module failed (log above)"
fi
cp "$work/nginx/objs/$MODULE" "$OUT/$MODULE.tmp"
chmod 0644 "$OUT/$MODULE.tmp"
mv "$OUT/$MODULE.tmp" "$OUT/$MODULE"
printf '%s\n' "$stamp" >"$OUT/stamp"
printf '%s\n' "$OUT/$MODULE"
