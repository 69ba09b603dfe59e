# The load balancer of docker-compose.replicas.yml: HAProxy from Debian 12's packages in front
# of N proxy + sidecar pairs. The base image is a build argument: Debian's official slim image
# by default (HAProxy and socat are installed on it), or the air-gapped base that
# docker/build-airgapped-images.sh makes with them already in it.
# No `# syntax=` line and no RUN --mount: both need BuildKit or a registry.
# See docs/decisions/20261125-replicas-behind-a-balancer.md.
ARG BALANCER_BASE_IMAGE=debian:bookworm-slim
FROM ${BALANCER_BASE_IMAGE}
ARG BALANCER_PACKAGES="haproxy socat ca-certificates"
RUN missing=""; \
    for pkg in ${BALANCER_PACKAGES}; do \
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $pkg"; \
    done; \
    if [ -n "$missing" ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends $missing \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
    && haproxy -v | grep -q 'version 2\.6\.' \
    && rm -f /etc/haproxy/haproxy.cfg \
    && mkdir -p /run/haproxy /etc/config
COPY docker/balancer/haproxy.cfg /usr/local/share/gateway-balancer/haproxy.cfg
COPY docker/balancer/errors/ /usr/local/share/gateway-balancer/errors/
COPY docker/balancer/entrypoint.sh /usr/local/bin/balancer-entrypoint
COPY docker/balancer/ctl.sh /usr/local/bin/balancer-ctl
RUN chmod 0755 /usr/local/bin/balancer-entrypoint /usr/local/bin/balancer-ctl
EXPOSE 443
# HAProxy's soft stop: no new connections, requests in flight finish (hard-stop-after 30 s).
STOPSIGNAL SIGUSR1
# Healthy while at least one pair is in service (the monitor frontend on loopback; no curl in
# the image, bash's /dev/tcp speaks the one request).
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8404 && printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["/usr/local/bin/balancer-entrypoint"]
CMD ["haproxy"]
