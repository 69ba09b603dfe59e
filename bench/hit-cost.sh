#!/bin/bash
# The nginx CPU one seen API key costs, measured as a difference small enough to trust on a
# shared two-core VM (docs/decisions/20261125-miss-path.md, "The hit's cost, to the microsecond").
#
#   bash bench/hit-cost.sh [GATEWAY_HOME] "apk <id>.<secret>" [rounds]
#
# Needs a running native gateway (`npm start`; GATEWAY_HOME defaults to .gateway) and that
# gateway's admin key or any other key. Two copies of its nginx are started beside it, one
# worker each, both workers pinned to CPU 1 and both wrk clients to CPU 0: copy A has the
# access_by_lua lines removed (authentication off), copy B is the gateway's own default.conf.
# Both answer from a static nginx upstream, and both are loaded at once at the same fixed rate,
# so whatever slows the VM slows both alike. Per round: each worker's CPU per request, and B-A.
# Two identical copies give B-A within ±1 µs here; the same two copies run one after the other
# differ by ±15 µs. LUA_A / LUA_B: another Lua folder for a copy (to compare two versions of
# the code), SED_A / SED_B: a sed script applied to a copy's default.conf, MAIN_SED_A /
# MAIN_SED_B: one applied to its main nginx.conf (a load_module line, say).
set -euo pipefail
home=${1:-.gateway}
key=${2:?usage: bench/hit-cost.sh [GATEWAY_HOME] \"apk <id>.<secret>\" [rounds]}
rounds=${3:-3}
rate=${RATE:-3000}
seconds=${SECONDS_PER_ROUND:-8}
home=$(cd "$home" && pwd)
for tool in wrk taskset bc nginx node; do
  command -v "$tool" >/dev/null || { echo "hit-cost: $tool is missing" >&2; exit 1; }
done
[ "$(nproc)" -ge 2 ] || { echo "hit-cost: needs two CPUs" >&2; exit 1; }
main_conf=$home/run/nginx/nginx.conf
gateway_conf=$home/config/nginx/conf.d/default.conf
[ -f "$main_conf" ] || { echo "hit-cost: no running gateway in $home ($main_conf)" >&2; exit 1; }
work=$(mktemp -d /tmp/hit-cost.XXXXXX)
chmod 755 "$work"
pids=()
stop() {
  for pid in "${pids[@]}"; do kill -QUIT "$pid" 2>/dev/null || true; done
  sleep 0.5
  rm -rf "$work"
}
trap stop EXIT
nginx_bin=$(command -v nginx)

# The upstream: one static answer from memory.
mkdir -p "$work/static"
upstream_port=$((20000 + RANDOM % 10000))
cat >"$work/static/nginx.conf" <<EOF
daemon on; worker_processes 1; pid $work/static/nginx.pid; error_log $work/static/error.log;
events { worker_connections 1024; }
http { access_log off; server { listen 127.0.0.1:$upstream_port; keepalive_requests 1000000;
  location / { return 200 '{"ok":true}'; } } }
EOF
"$nginx_bin" -p "$work/static/" -c "$work/static/nginx.conf"
pids+=("$(cat "$work/static/nginx.pid")")

# copy NAME PORT SED LUA MAIN_SED: the gateway's nginx with one worker on CPU 1, its own files
# and port.
copy() {
  local d=$work/$1
  mkdir -p "$d/conf.d" "$d/logs"
  sed -e "s|^pid .*|pid \"$d/nginx.pid\";|" \
    -e "s|^error_log .*|error_log \"$d/logs/error.log\" warn;|" \
    -e "s|access_log \"[^\"]*\"|access_log \"$d/logs/access.log\"|" \
    -e "s|include \"[^\"]*conf.d/\*.conf\";|include \"$d/conf.d/*.conf\";|" \
    -e "s|^worker_processes .*|worker_processes 1; worker_cpu_affinity 10;|" \
    -e "s|^daemon off;|daemon on;|" "$main_conf" >"$d/nginx.conf"
  if [ -n "$4" ]; then
    sed -i "s|lua_package_path \"[^\"]*\";|lua_package_path \"$4/?.lua;;\";|" "$d/nginx.conf"
  fi
  if [ -n "$5" ]; then sed -i "$5" "$d/nginx.conf"; fi
  # The control socket moves into the copy's folder (two nginx cannot bind one socket).
  local control
  control=$(sed -n 's|^ *listen "unix:\([^"]*nginx-control.sock\)";|\1|p' "$gateway_conf" | head -1)
  sed -e "s|listen \([0-9]*\) ssl|listen $2 ssl|" -e "s|$control|$d/control.sock|g" \
    "$gateway_conf" >"$d/conf.d/default.conf"
  # The app upstream becomes the static responder.
  sed -i "/^upstream gateway_app {/,/}/ s|^\( *server \).*;|\1127.0.0.1:$upstream_port;|" \
    "$d/conf.d/default.conf"
  if [ -n "$3" ]; then sed -i "$3" "$d/conf.d/default.conf"; fi
  "$nginx_bin" -p "$d/" -c "$d/nginx.conf" -e "$d/logs/stderr.log"
  pids+=("$(cat "$d/nginx.pid")")
}
port_a=$((30000 + RANDOM % 10000))
port_b=$((port_a + 1))
copy a "$port_a" "${SED_A-/access_by_lua_block/d}" "${LUA_A:-}" "${MAIN_SED_A:-}"
copy b "$port_b" "${SED_B:-}" "${LUA_B:-}" "${MAIN_SED_B:-}"
sleep 1

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
interval=$(echo "scale=4; 1000 / $rate" | bc)
script=$work/fixed-rate.lua
# The bench's own fixed-rate wrk script (bench/wrk/lua.ts), from the build `npm start` made.
repo=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$repo/dist/bench/wrk/lua.js" ] || { echo "hit-cost: run npm run build first" >&2; exit 1; }
node --input-type=module -e "import('$repo/dist/bench/wrk/lua.js').then((m) => process.stdout.write(m.FIXED_RATE))" >"$script"
total=0
for round in $(seq "$rounds"); do
  worker_a=$(pgrep -P "$(cat "$work/a/nginx.pid")")
  worker_b=$(pgrep -P "$(cat "$work/b/nginx.pid")")
  for port in "$port_a" "$port_b"; do
    taskset -c 0 wrk -t1 -c16 -d1s "https://localhost:$port/x" -H "Authorization: $key" >/dev/null &
  done
  wait
  a0=$(ticks "$worker_a")
  b0=$(ticks "$worker_b")
  taskset -c 0 wrk -t1 -c16 -d"${seconds}s" -s "$script" "https://localhost:$port_a/x" \
    -H "Authorization: $key" -- "$interval" >"$work/a.out" &
  taskset -c 0 wrk -t1 -c16 -d"${seconds}s" -s "$script" "https://localhost:$port_b/x" \
    -H "Authorization: $key" -- "$interval" >"$work/b.out" &
  wait
  a1=$(ticks "$worker_a")
  b1=$(ticks "$worker_b")
  for side in a b; do
    if grep -q 'Non-2xx' "$work/$side.out"; then
      echo "hit-cost: copy $side answered errors (is the key right?)" >&2
      cat "$work/$side.out" >&2
      exit 1
    fi
  done
  na=$(awk '/requests in/{print $1}' "$work/a.out")
  nb=$(awk '/requests in/{print $1}' "$work/b.out")
  ua=$(echo "scale=1; ($a1 - $a0) * 1000000 / $hz / $na" | bc)
  ub=$(echo "scale=1; ($b1 - $b0) * 1000000 / $hz / $nb" | bc)
  diff=$(echo "$ub - $ua" | bc)
  total=$(echo "$total + $diff" | bc)
  echo "round $round: A $ua µs/request ($na requests), B $ub µs/request ($nb), B-A $diff µs"
done
echo "mean B-A over $rounds rounds: $(echo "scale=1; $total / $rounds" | bc) µs of nginx CPU per request at $rate requests/s"
