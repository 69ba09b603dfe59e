import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load, loadAll } from 'js-yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, test } from 'vitest';
import { loadSettings } from '../../generator/settings.js';
import { DEFAULT_PROOF_FILE } from '../../sidecar/config.js';

/**
 * deploy/kubernetes/: every manifest kustomization.yaml lists is valid against the Kubernetes
 * API schemas (kubernetes-models), and what the pod says agrees with the images and the
 * settings it renders from: the ports, paths and user ids of docker/*.Dockerfile, the
 * sidecar's listeners, the control socket both containers share. No cluster runs here; the
 * real entrypoints with these users and a read-only root are run by the container suite.
 */

const ROOT = join(import.meta.dirname, '../..');
const DIR = join(ROOT, 'deploy/kubernetes');
type Manifest = { apiVersion: string; kind: string; metadata: { name: string } };

const MODELS: Record<string, (value: object) => { validate(): void }> = {
  'apps/v1/Deployment': (v) => new Deployment(v as never),
  'v1/Service': (v) => new Service(v as never),
  'networking.k8s.io/v1/NetworkPolicy': (v) => new NetworkPolicy(v as never),
  'policy/v1/PodDisruptionBudget': (v) => new PodDisruptionBudget(v as never),
};

const kustomization = load(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as {
  resources: string[];
  configMapGenerator: Array<{ name: string; files: string[] }>;
};
const manifests = kustomization.resources.flatMap(
  (file) => loadAll(readFileSync(join(DIR, file), 'utf8')) as Manifest[],
);

function validate(manifest: Manifest): void {
  const model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
  if (!model) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind}`);
  model(manifest).validate();
}

describe('deploy/kubernetes', () => {
  test('every listed file exists and every manifest validates against the API schemas', () => {
    for (const file of [
      ...kustomization.resources,
      ...kustomization.configMapGenerator.flatMap((g) => g.files),
    ])
      expect(existsSync(join(DIR, file)), file).toBe(true);
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      'Deployment/gateway',
      'NetworkPolicy/gateway',
      'NetworkPolicy/gateway-app',
      'NetworkPolicy/gateway-database',
      'PodDisruptionBudget/gateway',
      'Service/gateway',
    ]);
    for (const manifest of manifests) expect(() => validate(manifest)).not.toThrow();
  });

  test('the validator refuses what the API server would (so the test above can fail)', () => {
    const deployment = structuredClone(
      manifests.find((m) => m.kind === 'Deployment')!,
    ) as never as {
      spec: { replicas: unknown; template: { spec: { containers: Array<{ ports: unknown }> } } };
    };
    deployment.spec.replicas = 'three';
    expect(() => validate(deployment as never)).toThrow();
  });

  test('the pod agrees with the images and its settings: ports, paths, users, probes', async () => {
    const deployment = manifests.find((m) => m.kind === 'Deployment') as never as {
      spec: { replicas: number; template: { spec: PodSpec } };
    };
    type Container = {
      name: string;
      env?: Array<{ name: string; value?: string }>;
      ports?: Array<{ name: string; containerPort: number }>;
      securityContext: { runAsUser: number; readOnlyRootFilesystem: boolean };
      volumeMounts: Array<{ name: string; mountPath: string }>;
      readinessProbe?: { httpGet?: { path: string; port: string } };
      livenessProbe?: { httpGet?: { path: string; port: string } };
    };
    type PodSpec = {
      containers: Container[];
      initContainers: Container[];
      volumes: Array<{ name: string; emptyDir?: object; configMap?: { name: string } }>;
    };
    const pod = deployment.spec.template.spec;
    const proxy = pod.containers.find((c) => c.name === 'proxy')!;
    const gateway = pod.containers.find((c) => c.name === 'gateway')!;
    const env = (c: Container, name: string) => c.env?.find((e) => e.name === name)?.value;
    const mount = (c: Container, name: string) =>
      c.volumeMounts.find((m) => m.name === name)?.mountPath;
    expect(deployment.spec.replicas).toBe(3);

    // The settings in the ConfigMap pass the generator's own schema.
    const settingsMount = mount(proxy, 'settings')!;
    expect(env(proxy, 'GATEWAY_SETTINGS')).toBe(`${settingsMount}/gateway.yaml`);
    const settings = await loadSettings({ file: join(DIR, 'gateway.yaml'), env: {} });
    // The pods end TLS, so no proxy in front adds X-Forwarded-For: none is trusted, and the
    // per-address failure budget stays on (docs/decisions/20261127-caller-address-behind-a-balancer.md).
    expect(settings.request_id.trusted_proxies).toEqual([]);
    expect(settings.failure_budget.per_address).toBeGreaterThan(0);

    // Ports: nginx listens where the container port says; the sidecar where nginx asks.
    expect(proxy.ports).toEqual([{ name: 'https', containerPort: settings.https_port }]);
    expect(settings.upstreams.sidecar).toBe(`${env(gateway, 'HOST')}:${env(gateway, 'PORT')}`);
    const metricsPort = Number(env(gateway, 'METRICS_LISTEN')!.split(':')[1]);
    expect(gateway.ports).toEqual([{ name: 'metrics', containerPort: metricsPort }]);
    expect(gateway.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(gateway.livenessProbe?.httpGet).toEqual({ path: '/livez', port: 'metrics' });

    // One control socket, in an emptyDir only these two containers mount.
    const socket = settings.auth_cache.control_socket;
    expect(env(gateway, 'NGINX_CONTROL_SOCKET')).toBe(socket);
    const socketDir = socket.slice(0, socket.lastIndexOf('/'));
    expect(mount(proxy, 'control')).toBe(socketDir);
    expect(mount(gateway, 'control')).toBe(socketDir);
    expect(pod.volumes.find((v) => v.name === 'control')?.emptyDir).toBeDefined();

    // The configuration directory and runtime directory the proxy's entrypoint writes.
    const entrypoint = readFileSync(join(ROOT, 'docker/proxy-entrypoint.sh'), 'utf8');
    expect(entrypoint).toContain('gateway-config prepare /etc/config');
    expect(mount(proxy, 'config')).toBe('/etc/config');
    expect(entrypoint).toContain('${GATEWAY_RUNTIME_DIR:-');
    expect(mount(proxy, 'runtime')).toBe(env(proxy, 'GATEWAY_RUNTIME_DIR'));
    for (const c of [proxy, ...pod.initContainers])
      expect(c.volumeMounts.some((m) => m.mountPath === '/etc/config')).toBe(true);
    // The sidecar reads nginx's proof there, read-only, where it looks by default.
    expect(mount(gateway, 'config')).toBe('/etc/config');
    expect(
      gateway.volumeMounts.find((m) => m.name === 'config') as { readOnly?: boolean } | undefined,
    ).toMatchObject({ readOnly: true });
    expect(DEFAULT_PROOF_FILE.startsWith('/etc/config/')).toBe(true);

    // Users: the gateway image's `USER node` (uid 1000 in both base images); the proxy as
    // www-data (uid 33 in Debian), its workers' user in the image. Root filesystems read-only.
    expect(readFileSync(join(ROOT, 'docker/gateway.Dockerfile'), 'utf8')).toMatch(/^USER node$/m);
    expect(gateway.securityContext.runAsUser).toBe(1000);
    expect(entrypoint).toContain('NGINX_WORKER_USER:-www-data');
    expect(proxy.securityContext.runAsUser).toBe(33);
    for (const c of [proxy, gateway, ...pod.initContainers])
      expect(c.securityContext.readOnlyRootFilesystem, c.name).toBe(true);
    // The sidecar's port in the image is the one nginx is told.
    expect(readFileSync(join(ROOT, 'docker/gateway.Dockerfile'), 'utf8')).toContain(
      `PORT=${env(gateway, 'PORT')}`,
    );

    // The Service sends to the proxy's named port; the policy lets it in and keeps metrics in.
    const service = manifests.find((m) => m.kind === 'Service') as never as {
      spec: { ports: Array<{ targetPort: string }> };
    };
    expect(service.spec.ports.map((p) => p.targetPort)).toEqual(['https']);
    const policy = manifests.find(
      (m) => m.kind === 'NetworkPolicy' && m.metadata.name === 'gateway',
    ) as never as {
      spec: { ingress: Array<{ from?: unknown[]; ports: Array<{ port: number }> }> };
    };
    const open = policy.spec.ingress.filter((rule) => !rule.from).flatMap((r) => r.ports);
    expect(open.map((p) => p.port)).toEqual([settings.https_port]);
    const metricsRule = policy.spec.ingress.find((rule) =>
      rule.ports.some((p) => p.port === metricsPort),
    );
    expect(metricsRule?.from?.length).toBeGreaterThan(0);
  });

  test('the NetworkPolicy lets the pods reach the documented application upstream, and nothing else on its port', async () => {
    const settings = await loadSettings({ file: join(DIR, 'gateway.yaml'), env: {} });
    // upstreams.app is a Service name and port in the namespace (docs/kubernetes.md, step 2).
    const app = /^([a-z0-9-]+):(\d+)$/.exec(settings.upstreams.app);
    expect(app, settings.upstreams.app).not.toBeNull();
    const [, service, port] = app!;
    type Rule = {
      to?: Array<{
        podSelector?: { matchLabels: Record<string, string> };
        namespaceSelector?: unknown;
      }>;
      ports: Array<{ port: number }>;
    };
    const policy = manifests.find(
      (m) => m.kind === 'NetworkPolicy' && m.metadata.name === 'gateway',
    ) as unknown as { spec: { egress: Rule[] } };
    const rules = policy.spec.egress.filter((rule) =>
      rule.ports.some((p) => p.port === Number(port)),
    );
    expect(rules).toHaveLength(1);
    // Pods of this namespace with the label the page names for the Service's pods.
    const labels = { 'app.kubernetes.io/name': service! };
    expect(rules[0]!.to).toEqual([{ podSelector: { matchLabels: labels } }]);
    const page = readFileSync(join(ROOT, 'docs/kubernetes.md'), 'utf8');
    expect(page).toContain(`labelled \`app.kubernetes.io/name: ${service}\` on port ${port}`);
    expect(page).toContain(`default \`${settings.upstreams.app}\``);
  });
});

/**
 * NetworkPolicy as the API server's network plugin applies it (networking.k8s.io/v1): a pod
 * selected by a policy of a direction admits in that direction only what some rule of those
 * policies allows; a pod no policy selects admits everything. Enough of it for these
 * manifests: label selectors (matchLabels, matchExpressions), peers by pod and namespace
 * selector, numeric and named ports; an ipBlock peer is taken to match any pod (it may).
 */
type Selector = {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
};
type Peer = { podSelector?: Selector; namespaceSelector?: Selector; ipBlock?: unknown };
type PolicyPort = { port?: number | string; endPort?: number; protocol?: string };
type PolicyRule = { from?: Peer[]; to?: Peer[]; ports?: PolicyPort[] };
type Policy = {
  metadata: { name: string; namespace: string };
  spec: {
    podSelector: Selector;
    policyTypes?: string[];
    ingress?: PolicyRule[];
    egress?: PolicyRule[];
  };
};
type Pod = {
  namespace: string;
  labels: Record<string, string>;
  /** The container ports by name, for policies that name them. */
  ports?: Record<string, number>;
};

function selects(selector: Selector, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {}))
    if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = e.key in labels;
    const ok =
      e.operator === 'In'
        ? has && (e.values ?? []).includes(labels[e.key]!)
        : e.operator === 'NotIn'
          ? !has || !(e.values ?? []).includes(labels[e.key]!)
          : e.operator === 'Exists'
            ? has
            : !has;
    if (!ok) return false;
  }
  return true;
}

const namespaceLabels = (pod: Pod) => ({ 'kubernetes.io/metadata.name': pod.namespace });

function peerMatches(peer: Peer, policyNamespace: string, pod: Pod): boolean {
  if (peer.ipBlock) return true;
  const namespaceOk = peer.namespaceSelector
    ? selects(peer.namespaceSelector, namespaceLabels(pod))
    : pod.namespace === policyNamespace;
  return namespaceOk && (!peer.podSelector || selects(peer.podSelector, pod.labels));
}

function portMatches(ports: PolicyPort[] | undefined, port: number, target: Pod): boolean {
  if (!ports?.length) return true;
  return ports.some((p) => {
    if ((p.protocol ?? 'TCP') !== 'TCP') return false;
    if (p.port === undefined) return true;
    if (typeof p.port === 'string') return target.ports?.[p.port] === port;
    return p.endPort ? port >= p.port && port <= p.endPort : p.port === port;
  });
}

function directionAdmits(
  policies: Policy[],
  direction: 'Ingress' | 'Egress',
  subject: Pod,
  peer: Pod,
  port: number,
  target: Pod,
): boolean {
  const applying = policies.filter((p) => {
    const types = p.spec.policyTypes ?? (p.spec.egress ? ['Ingress', 'Egress'] : ['Ingress']);
    return (
      types.includes(direction) &&
      p.metadata.namespace === subject.namespace &&
      selects(p.spec.podSelector, subject.labels)
    );
  });
  if (applying.length === 0) return true;
  return applying.some((policy) =>
    (direction === 'Ingress' ? policy.spec.ingress : policy.spec.egress)?.some((rule) => {
      const peers = direction === 'Ingress' ? rule.from : rule.to;
      const peerOk =
        !peers?.length || peers.some((p) => peerMatches(p, policy.metadata.namespace, peer));
      return peerOk && portMatches(rule.ports, port, target);
    }),
  );
}

/** Whether a TCP connection from `from` to `to`'s `port` is let through, both ways checked. */
function admits(policies: Policy[], from: Pod, to: Pod, port: number): boolean {
  return (
    directionAdmits(policies, 'Egress', from, to, port, to) &&
    directionAdmits(policies, 'Ingress', to, from, port, to)
  );
}

describe('deploy/kubernetes: the NetworkPolicies as rendered (kustomization namespace applied)', () => {
  // What `kubectl kustomize` makes of them: this kustomization adds its namespace to every
  // object and labels to metadata only (includeSelectors: false).
  const namespace = (kustomization as unknown as { namespace: string }).namespace;
  const policies = manifests
    .filter((m) => m.kind === 'NetworkPolicy')
    .map((m) => {
      const p = structuredClone(m) as unknown as Policy;
      p.metadata.namespace ??= namespace;
      return p;
    });
  const deployment = manifests.find((m) => m.kind === 'Deployment') as unknown as {
    spec: {
      template: {
        metadata: { labels: Record<string, string> };
        spec: {
          containers: Array<{
            name: string;
            env?: Array<{ name: string; value?: string }>;
            ports?: Array<{ name: string; containerPort: number }>;
          }>;
        };
      };
    };
  };
  const containers = deployment.spec.template.spec.containers;
  const env = (name: string) =>
    containers.find((c) => c.name === 'gateway')?.env?.find((e) => e.name === name)?.value;
  const gateway: Pod = {
    namespace,
    labels: deployment.spec.template.metadata.labels,
    ports: Object.fromEntries(
      containers.flatMap((c) => c.ports ?? []).map((p) => [p.name, p.containerPort]),
    ),
  };
  const sidecarPort = Number(env('PORT'));
  const metricsPort = Number(env('METRICS_LISTEN')!.split(':')[1]);
  const httpsPort = gateway.ports!.https!;
  const app: Pod = { namespace, labels: { 'app.kubernetes.io/name': 'app' } };
  const database: Pod = { namespace, labels: { 'app.kubernetes.io/name': 'postgresql' } };
  const prometheus: Pod = {
    namespace: 'monitoring',
    labels: { 'app.kubernetes.io/name': 'prometheus' },
  };
  const neighbour: Pod = { namespace, labels: { 'app.kubernetes.io/name': 'something-else' } };
  const elsewhere: Pod = { namespace: 'shop', labels: { 'app.kubernetes.io/name': 'app' } };

  test('every policy lands in the namespace of the pods it selects', () => {
    expect(namespace).toBe('gateway');
    expect(policies.map((p) => p.metadata.namespace)).toEqual(policies.map(() => namespace));
  });

  test('an app pod reaches neither PostgreSQL nor the sidecar (its port, its metrics); only the public port', () => {
    expect(admits(policies, app, database, 5432)).toBe(false);
    expect(admits(policies, app, gateway, sidecarPort)).toBe(false);
    expect(admits(policies, app, gateway, metricsPort)).toBe(false);
    expect(admits(policies, app, gateway, httpsPort)).toBe(true);
    // And the sidecar listens on the pod's loopback only: nginx in the same pod asks it.
    expect(env('HOST')).toBe('127.0.0.1');
    expect(gateway.ports).not.toHaveProperty('sidecar');
    expect(Object.values(gateway.ports!)).not.toContain(sidecarPort);
  });

  test('the gateway pods reach PostgreSQL and the app; Prometheus the metrics; nothing else the app or PostgreSQL', () => {
    expect(admits(policies, gateway, database, 5432)).toBe(true);
    expect(admits(policies, gateway, app, 8080)).toBe(true);
    expect(admits(policies, prometheus, gateway, metricsPort)).toBe(true);
    for (const other of [neighbour, prometheus]) {
      expect(admits(policies, other, app, 8080)).toBe(false);
      expect(admits(policies, other, database, 5432)).toBe(false);
      expect(admits(policies, other, gateway, sidecarPort)).toBe(false);
    }
    expect(admits(policies, neighbour, gateway, metricsPort)).toBe(false);
    expect(admits(policies, neighbour, gateway, httpsPort)).toBe(true);
    // Another namespace's pods are not these policies' to restrict, and not let in by them.
    expect(admits(policies, elsewhere, database, 5432)).toBe(false);
    expect(admits(policies, elsewhere, app, 8080)).toBe(false);
  });

  test('the evaluator can fail: without the policies everything passes, without a rule it refuses', () => {
    expect(admits([], app, database, 5432)).toBe(true);
    const widened = structuredClone(policies);
    widened
      .find((p) => p.metadata.name === 'gateway-database')!
      .spec.ingress![0]!.from!.push({ podSelector: { matchLabels: app.labels } });
    expect(admits(widened, app, database, 5432)).toBe(true);
    const narrowed = structuredClone(policies);
    narrowed.find((p) => p.metadata.name === 'gateway-database')!.spec.ingress = [];
    expect(admits(narrowed, gateway, database, 5432)).toBe(false);
  });
});
