import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load, loadAll } from 'js-yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, test } from 'vitest';
import { loadSettings } from '../../generator/settings.js';

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
