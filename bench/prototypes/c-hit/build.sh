#!/bin/bash
# Builds the measurement prototype (ngx_http_gateway_hit_module.c) against this machine's nginx
# with Debian's nginx-dev (apt-get install nginx-dev gcc make libpcre2-dev libssl-dev
# zlib1g-dev): the same configure flags as the packaged nginx (--with-compat), so the .so loads
# into it. Prints the module's path.  Usage: bash build.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/gateway-hit-module}
src=/usr/share/nginx/src
[ -f "$src/conf_flags" ] || { echo "build.sh: needs Debian's nginx-dev ($src)" >&2; exit 1; }
rm -rf "$out/src" && mkdir -p "$out" && cp -r "$src" "$out/src"
# shellcheck disable=SC1091
. "$src/conf_flags"
(cd "$out/src" && ./configure "${NGX_CONF_FLAGS[@]}" --with-cc-opt="-O2 -g" --add-dynamic-module="$here" >"$out/configure.log" 2>&1 \
  && make -j2 -f objs/Makefile modules >"$out/make.log" 2>&1) || { tail -n 30 "$out/configure.log" "$out/make.log" >&2; exit 1; }
cp "$out/src/objs/ngx_http_gateway_hit_module.so" "$out/"
echo "$out/ngx_http_gateway_hit_module.so"
