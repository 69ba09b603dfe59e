#!/usr/bin/env bash
# The set-up step of `npm start` (prestart) and `npm test` (pretest): makes this machine ready
# for that command, and is a quick no-op when it already is. Plain bash on purpose: it runs
# before node_modules exists, so nothing here may need an npm package.
#
#   bash scripts/ensure-system.sh start   # npm dependencies; nginx with the Lua module and
#                                         # the gateway's own module, built
#   bash scripts/ensure-system.sh test    # the same, plus openssl/wrk/git, the container
#                                         # engine (podman) and the air-gapped base images
#
# Debian packages are installed as root: directly when run as root, through `sudo -n` for a
# user allowed to, otherwise it stops and prints the exact command to run. Needs only the
# Debian mirror and the npm registry. See docs/decisions/20261123-two-command-setup.md.
set -euo pipefail

SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
ROOT="$(cd "$(dirname "$SELF")/.." && pwd)"

# What `npm start` needs: nginx (ssl, http2, auth_request) with the Lua module and the Lua
# libraries the proxy uses; openssl and CA certificates for TLS.
# nginx-dev and a C compiler build the gateway's own nginx module against that nginx (step 3).
START_PACKAGES=(
  nginx-light libnginx-mod-http-lua lua-resty-core lua-resty-lrucache lua-cjson
  openssl ca-certificates
  nginx-dev gcc make libc6-dev libpcre2-dev libssl-dev zlib1g-dev
)
# What `npm test` needs beyond that: openssl's CLI for the test PKI, wrk (the bench smoke
# test), git (the fresh-clone test), chromium (the console's tests drive it through
# puppeteer-core; nothing is downloaded at run time), clang-14 with libFuzzer and its sanitizer
# runtimes (the nginx module's fuzz targets, test/sanitizers/; the module's ASan build uses gcc's
# libasan, which gcc brings). The container engine's packages are docker/setup-podman.sh's.
TEST_PACKAGES=(wrk git chromium clang-14 libfuzzer-14-dev libclang-rt-14-dev redis-server)

log() { printf '[setup] %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

missing_packages() {
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$' ||
      printf '%s\n' "$pkg"
  done
}

# --- as root: install Debian packages with progress ------------------------------------------
install_packages() {
  local started total=0 line
  started=$(date +%s)
  export DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1
  # Debian starts nginx on port 80 after installing it; the gateway runs its own nginx.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  log "apt-get update"
  apt-get update -qq >/dev/null || die "apt-get update failed (is the Debian mirror reachable?)"
  total=$(apt-get install -s --no-install-recommends "$@" 2>/dev/null | grep -c '^Inst ' || true)
  log "installing $* (${total} packages with their dependencies)"
  # Progress: one line per package set up, numbered.
  if ! apt-get install -y -q --no-install-recommends -o Dpkg::Progress-Fancy=0 "$@" 2>&1 |
    {
      n=0
      while IFS= read -r line; do
        case "$line" in
        "Need to get"*) log "  ${line}" ;;
        "Setting up "*)
          n=$((n + 1))
          log "  (${n}/${total}) ${line%% ...*}"
          ;;
        E:* | "dpkg: error"*) log "  ${line}" ;;
        esac
      done
    }; then
    die "apt-get install failed"
  fi
  log "installed in $(($(date +%s) - started)) s"
}

if [[ "${1:-}" == --install-packages ]]; then
  shift
  [[ "$(id -u)" == 0 ]] || die "--install-packages needs root"
  install_packages "$@"
  exit 0
fi

# --- the profile ------------------------------------------------------------------------------
PROFILE="${1:-}"
case "$PROFILE" in
start) PACKAGES=("${START_PACKAGES[@]}") ;;
test) PACKAGES=("${START_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
*) die "usage: bash scripts/ensure-system.sh start|test" ;;
esac
cd "$ROOT"
T0=$(date +%s)

# Runs a command as root: directly, or through sudo without a password prompt. Without either,
# stops and prints what to run ($1: a description of the command, shown to the user).
as_root() {
  local what="$1"
  shift
  if [[ "$(id -u)" == 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    log "as root (sudo): ${what}"
    sudo -n "$@"
  else
    log "this needs root, and sudo cannot be used without a password here. Run:"
    log "  sudo $(printf '%q ' "$@")"
    log "(or the same as root without sudo), then run npm ${PROFILE} again."
    exit 1
  fi
}

# 1. npm dependencies. npm writes node_modules/.package-lock.json on every install: when it is
#    newer than package.json and package-lock.json, node_modules is what the lockfile says.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ||
  package.json -nt node_modules/.package-lock.json ]]; then
  command -v npm >/dev/null || die "npm is not installed (Node 20.19 or later with npm is needed)"
  log "npm dependencies: npm install (the versions in package-lock.json)"
  # Not `npm ci`: the registry mirror these machines reach lacks some other platforms'
  # optional packages, so the lockfile cannot list them and `npm ci` refuses it.
  # `npm install --no-save` installs exactly the locked versions this platform needs.
  npm install --no-save --no-audit --no-fund --loglevel=error >&2
  touch node_modules/.package-lock.json
fi

# 2. Debian packages.
MISSING=()
if command -v dpkg-query >/dev/null; then
  mapfile -t MISSING < <(missing_packages "${PACKAGES[@]}")
else
  log "not a Debian-like system: make sure these (or their equivalents) are installed: ${PACKAGES[*]}"
fi
if ((${#MISSING[@]} > 0)); then
  as_root "install ${MISSING[*]}" bash "$SELF" --install-packages "${MISSING[@]}"
fi

# 3. The gateway's nginx module (nginx-module/), built into build/ against this nginx, as the
#    user running this (a quick no-op when it is up to date).
bash scripts/build-nginx-module.sh >/dev/null

# 3b. For the tests: promtool, which checks the sidecar's /metrics as Prometheus would. Debian
#     ships it only inside the prometheus server package, whose installation would start a
#     server: its binary is taken out of the downloaded package instead (no root needed).
if [[ "$PROFILE" == test && ! -x build/tools/promtool ]] && ! command -v promtool >/dev/null; then
  log "promtool: taken out of Debian's prometheus package into build/tools/"
  work=$(mktemp -d)
  if (cd "$work" && apt-get download prometheus >/dev/null 2>&1 && dpkg-deb -x prometheus_*.deb x); then
    mkdir -p build/tools && cp "$work/x/usr/bin/promtool" build/tools/promtool
  else
    die "cannot download Debian's prometheus package (for promtool): is a Debian mirror reachable?"
  fi
  rm -rf "$work"
fi

# 4. For the tests: the container engine and the base images (each script is idempotent and
#    only checks when everything is there).
if [[ "$PROFILE" == test ]]; then
  as_root "container engine (docker/setup-podman.sh)" bash docker/setup-podman.sh >/dev/null
  as_root "base images (docker/build-airgapped-images.sh --bases-only)" \
    bash docker/build-airgapped-images.sh --bases-only >/dev/null
fi

elapsed=$(($(date +%s) - T0))
if ((elapsed >= 2)); then log "ready for npm ${PROFILE} (set-up took ${elapsed} s)"; fi
