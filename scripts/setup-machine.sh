#!/usr/bin/env bash
# One-time set-up of a fresh Debian 12 machine for running and testing the gateway, as root:
#   - nginx (nginx-light: ssl, http2) with its Lua module, openssl, wrk (the benchmark's load);
#   - the project's npm dependencies (npm ci);
#   - a Docker-compatible container engine (podman, docker/setup-podman.sh) and the images,
#     built from Debian and npm packages alone (docker/build-airgapped-images.sh).
# Idempotent: what is already there is kept. Needs only the Debian mirror and the npm registry.
#
#   sudo bash scripts/setup-machine.sh            # everything
#   sudo bash scripts/setup-machine.sh --native   # nginx and npm only (enough for npm start)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }
NATIVE_ONLY=0
[[ "${1:-}" == --native ]] && NATIVE_ONLY=1

if [[ "$(id -u)" -ne 0 ]]; then
  log "run as root (it installs Debian packages)"
  exit 1
fi

PACKAGES=(nginx-light libnginx-mod-http-lua lua-resty-core lua-resty-lrucache lua-cjson openssl ca-certificates wrk)
missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$pkg")
done
if ((${#missing[@]} > 0)); then
  log "installing ${missing[*]}"
  # Debian starts nginx on port 80 after installing it; the gateway runs its own nginx instead.
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

log "npm dependencies"
# Not `npm ci`: the registry mirror these machines reach lacks some other platforms' optional
# packages (biome, rollup binaries), so the lockfile cannot list them and `npm ci` refuses it.
# `npm install --no-save` installs exactly the locked versions of everything this platform needs.
npm install --no-save --no-audit --no-fund --loglevel=error

if ((NATIVE_ONLY)); then
  log "done (native only)"
  exit 0
fi

log "container engine"
bash docker/setup-podman.sh >/dev/null
log "air-gapped base images"
bash docker/build-airgapped-images.sh --bases-only >/dev/null
log "done"
