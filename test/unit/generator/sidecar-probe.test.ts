import { expect, test } from 'vitest';
import { parseSettings, renderConfigFiles } from '../../../generator/index.js';

// /readyz asks nginx's control socket whether nginx reaches this sidecar (issue 42). The probe
// must travel the way callers' questions travel, the sidecar upstream, and land on the path
// the sidecar answers with its instance id.

test("the control server proxies /sidecar-probe to the sidecar's /probe through gateway_sidecar", () => {
  const settings = parseSettings({ config_dir: '/etc/config' }, 'test');
  const conf = renderConfigFiles(settings).find((f) => f.path.endsWith('default.conf'))!.content;
  const control = conf.slice(
    conf.indexOf('# The control endpoint'),
    conf.indexOf('location = /invalidate {'),
  );
  const probe = /location = \/sidecar-probe \{([^}]*)\}/.exec(control);
  expect(probe, 'the probe location lives in the control server').not.toBeNull();
  expect(probe![1]).toContain('proxy_pass http://gateway_sidecar/probe;');
  expect(probe![1]).toContain('proxy_set_header Connection "";');
  // The same upstream block the /auth location and the management API use.
  expect(control).toContain('proxy_pass http://gateway_sidecar/auth;');
});
