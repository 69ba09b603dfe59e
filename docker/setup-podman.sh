#!/usr/bin/env bash
# Prepares a Docker-compatible container engine (podman with runc) on a Debian 12 machine
# that has no Docker engine and no registry access, as root. Idempotent: a second run only
# checks, and restarts the API service if it is not answering.
#
#   eval "$(docker/setup-podman.sh)"      # installs, starts, exports DOCKER_HOST & co.
#
# Also starts docker/podman-healthcheck-ticker.sh: without systemd, podman never runs a
# container's HEALTHCHECK by itself, and compose's `condition: service_healthy` would hang.
#
# Progress goes to stderr; stdout carries only the `export` lines to evaluate.
# See docs/decisions/20261122-containers-engine.md.
set -euo pipefail

SOCKET_DIR=/run/podman
SOCKET="${SOCKET_DIR}/podman.sock"
SERVICE_LOG="${PODMAN_SERVICE_LOG:-/var/log/podman-service.log}"
CONF=/etc/containers/containers.conf
PACKAGES=(
  podman runc docker-compose mmdebstrap
  # networking: CNI bridge + portmap, and the dnsname plugin (dnsmasq) that resolves service
  # names; init; rootless helpers
  containernetworking-plugins golang-github-containernetworking-plugin-dnsname dnsmasq-base
  slirp4netns fuse-overlayfs catatonit uidmap iptables
  # used here to probe the socket; by the image build script
  curl ca-certificates tar gzip
)

log() { printf '[setup-podman] %s\n' "$*" >&2; }

if [[ "$(id -u)" -ne 0 ]]; then
  log "must run as root (installs packages, writes ${CONF}, owns ${SOCKET})"
  exit 1
fi

# 1. Packages: only touch apt when something is missing, and then update the lists first.
missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]} > 0)); then
  log "installing: ${missing[*]}"
  apt_log="$(mktemp /tmp/setup-podman-apt.XXXXXX.log)"
  if ! {
    export DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"
  } >"$apt_log" 2>&1; then
    log "apt-get failed; last lines of ${apt_log}:"
    tail -n 30 "$apt_log" >&2
    exit 1
  fi
  rm -f "$apt_log"
else
  log "packages already installed"
fi

# 2. Engine configuration:
#    - runtime runc: crun fails on this kernel's hybrid cgroups;
#    - ulimits below the sandbox's hard limits (podman's defaults are higher; raising fails);
#    - the CNI network backend with the dnsname plugin instead of netavark + aardvark-dns:
#      aardvark-dns 1.4 (Debian 12) drops or wrongly answers name queries for seconds each time
#      a container joins or leaves any network, so service names (database, gateway) fail
#      now and then. Measured: 400 lookups while 12 containers came and went, 1-10 s stalls
#      and failed lookups in every run with aardvark; none with dnsname (dnsmasq);
#    - a 1 s resolver timeout, so that a lost query costs 1 s rather than glibc's 5 s.
desired_conf='# Written by docker/setup-podman.sh (see docs/decisions/20261122-containers-engine.md).
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
dns_options = ["timeout:1", "attempts:5"]

[engine]
runtime = "runc"

[network]
network_backend = "cni"
'
mkdir -p "$(dirname "$CONF")"
if [[ -f "$CONF" ]] && [[ "$(cat "$CONF")" == "$(printf '%s' "$desired_conf")" ]]; then
  log "${CONF} already up to date"
else
  if [[ -f "$CONF" ]] && ! grep -q 'Written by docker/setup-podman.sh' "$CONF" &&
    [[ ! -f "${CONF}.orig" ]]; then
    cp -p "$CONF" "${CONF}.orig"
    log "kept the previous ${CONF} as ${CONF}.orig"
  fi
  printf '%s' "$desired_conf" >"$CONF"
  log "wrote ${CONF}"
  conf_changed=1
  if [[ -n "$(podman ps -aq 2>/dev/null)" ]]; then
    log "note: existing containers keep the network backend they were made with; recreate them"
  fi
fi

# 3. The Docker-compatible API socket.
answers() { curl -fsS --max-time 3 --unix-socket "$SOCKET" http://d/_ping >/dev/null 2>&1; }

service_pids() { pgrep -f "podman system service .*unix://${SOCKET}" || true; }

if [[ -n "${conf_changed:-}" ]] && [[ -n "$(service_pids)" ]]; then
  # A running service keeps its old configuration: restart it.
  log "configuration changed: restarting the API service"
  for pid in $(service_pids); do kill "$pid"; done
  sleep 1
fi

# A service started from a folder that was deleted since (a removed checkout or worktree) still
# answers pings but starts no container: conmon inherits the missing working directory
# ("Failed to get working directory", "write child: broken pipe"). Stop it; it is started again
# below, from /.
in_deleted_folder() { [[ "$(readlink "/proc/$1/cwd" 2>/dev/null)" == *" (deleted)" ]]; }
for pid in $(service_pids); do
  if in_deleted_folder "$pid"; then
    log "API service ${pid} runs in a deleted folder: stopping it"
    kill "$pid" 2>/dev/null || true
    sleep 1
  fi
done

if answers; then
  log "API socket ${SOCKET} already answers"
else
  for pid in $(service_pids); do
    log "API service ${pid} does not answer: stopping it"
    kill "$pid" 2>/dev/null || true
  done
  mkdir -p "$SOCKET_DIR"
  rm -f "$SOCKET"
  log "starting: podman system service --time=0 unix://${SOCKET} (log: ${SERVICE_LOG})"
  # From /: the service and every conmon it starts outlive the folder this ran in.
  (cd / && exec setsid podman system service --time=0 "unix://${SOCKET}") </dev/null >>"$SERVICE_LOG" 2>&1 &
  for _ in $(seq 1 100); do
    if answers; then break; fi
    sleep 0.1
  done
  if ! answers; then
    log "the API socket did not answer within 10 s; last lines of ${SERVICE_LOG}:"
    tail -n 20 "$SERVICE_LOG" >&2 || true
    exit 1
  fi
  log "API socket answers"
fi

# 4. Health checks: podman runs them from systemd timers, and there is no systemd here, so a
#    small loop runs them instead (docker/podman-healthcheck-ticker.sh explains).
TICKER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/podman-healthcheck-ticker.sh"
TICKER_PID_FILE="${SOCKET_DIR}/healthcheck-ticker.pid"
ticker_running() {
  local pid
  pid="$(cat "$TICKER_PID_FILE" 2>/dev/null || true)"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null &&
    grep -q podman-healthcheck-ticker "/proc/${pid}/cmdline" 2>/dev/null
}
if [[ -d /run/systemd/system ]]; then
  log "systemd is running: podman schedules health checks itself"
elif ticker_running && cmp -s "$TICKER" "${SOCKET_DIR}/podman-healthcheck-ticker.sh" &&
  ! in_deleted_folder "$(cat "$TICKER_PID_FILE")"; then
  log "health-check ticker already running (pid $(cat "$TICKER_PID_FILE"))"
else
  if ticker_running; then
    log "health-check ticker changed or runs in a deleted folder: restarting it"
    kill "$(cat "$TICKER_PID_FILE")"
  fi
  # A copy, so that the loop does not depend on this checkout staying where it is.
  install -m 0755 "$TICKER" "${SOCKET_DIR}/podman-healthcheck-ticker.sh"
  (cd / && exec setsid "${SOCKET_DIR}/podman-healthcheck-ticker.sh") </dev/null >>"$SERVICE_LOG" 2>&1 &
  echo $! >"$TICKER_PID_FILE"
  log "started the health-check ticker (pid $!)"
fi

version="$(curl -fsS --max-time 3 --unix-socket "$SOCKET" http://d/version |
  sed -n 's/.*"Version":"\([^"]*\)".*/\1/p' | head -n 1)"
log "engine: podman ${version:-?} (runtime $(podman info --format '{{.Host.OCIRuntime.Name}}' 2>/dev/null || echo '?'))"

cat <<EOF
export DOCKER_HOST=unix://${SOCKET}
export TESTCONTAINERS_RYUK_DISABLED=true
export TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1
EOF
