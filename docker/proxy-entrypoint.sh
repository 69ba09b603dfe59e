#!/bin/bash
# Entrypoint of the proxy image. With the default command (nginx) it runs the start-up step the
# native run uses too, `gateway-config prepare` (generator/prepare.ts): complete /etc/config
# without overwriting a file (files it creates belong to the folder's owner), read back the
# HTTPS port and the control socket (making its folder, a volume shared with the gateway), write the main
# nginx.conf into the runtime directory (logs to stderr/stdout, workers as www-data), check it
# all with nginx -t. Then it starts the upstream watcher (docker/proxy-upstream-watch.sh) and
# becomes nginx, PID 1, which gets the container's signals. Any other command runs as given,
# e.g. `docker compose run --rm proxy gateway-config --help`.
set -euo pipefail

if [[ "${1:-}" != nginx ]]; then exec "$@"; fi

# The upstreams' host names, resolvable before nginx -t looks them up (docker/proxy-hosts.mjs:
# a name only the second network's DNS knows, under podman's CNI dnsname plugin).
hosts=()
for upstream in "${GATEWAY_SIDECAR_UPSTREAM:-}" "${GATEWAY_APP_UPSTREAM:-}"; do
  host="${upstream%:*}"
  case "$host" in '' | unix | \[* | *[!A-Za-z0-9.-]*) ;; *[!0-9.]*) hosts+=("$host") ;; esac
done
if ((${#hosts[@]} > 0)); then proxy-hosts "${hosts[@]}" || true; fi

args="$(gateway-config prepare /etc/config --runtime-dir "${GATEWAY_RUNTIME_DIR:-/run/gateway}" \
  --error-log stderr --access-log stdout --user "${NGINX_WORKER_USER:-www-data}" --nginx-args)"
mapfile -t nginx_args <<<"$args"
proxy-upstream-watch "${nginx_args[@]}" &
exec "$@" "${nginx_args[@]}"
