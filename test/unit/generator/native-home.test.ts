import { describe, expect, test } from 'vitest';
import { nativeConfProblems, readServerConf, repairNativeConf } from '../../../generator/index.js';

// The native run points an existing default.conf at its own sockets and app, changing those
// lines only (issue 42: a file rendered for containers made nginx refuse everyone).

const CONTAINER_CONF = `upstream gateway_app {
    server 127.0.0.1:8080;
    keepalive 32;
}

upstream gateway_sidecar {
    server 127.0.0.1:8081; # the containers' sidecar
    keepalive 32;
}

server {
    listen "unix:/run/gateway-control/nginx.sock";
    location = /auth { proxy_pass http://gateway_sidecar/auth; }
}

server {
    listen 8443 ssl http2;
    set $api_keys_enabled false; # an operator's edit
    set $gateway_control_socket "unix:/run/gateway-control/nginx.sock";
    set $gateway_sidecar "127.0.0.1:8081";
}
`;

const HOME = {
  configDir: '/srv/gw/config',
  sidecar: 'unix:/srv/gw/run/sidecar.sock',
  app: 'unix:/srv/gw/run/app.sock',
  controlSocket: '/srv/gw/run/nginx-control.sock',
};

describe('repairNativeConf', () => {
  test('points the upstreams, the control socket and the variables at the home; keeps the rest', () => {
    const { text, changes } = repairNativeConf(CONTAINER_CONF, HOME);
    expect(changes).toEqual([
      `upstream gateway_app: 127.0.0.1:8080 → ${HOME.app}`,
      `upstream gateway_sidecar: 127.0.0.1:8081 → ${HOME.sidecar}`,
      `control socket: /run/gateway-control/nginx.sock → ${HOME.controlSocket}`,
      `$gateway_sidecar: 127.0.0.1:8081 → ${HOME.sidecar}`,
    ]);
    const facts = readServerConf(text);
    expect(facts.upstreams).toEqual({ gateway_app: HOME.app, gateway_sidecar: HOME.sidecar });
    expect(facts.unixSockets).toEqual([HOME.controlSocket]);
    expect(facts.sidecarVariable).toBe(HOME.sidecar);
    expect(text).toContain(`set $gateway_control_socket "unix:${HOME.controlSocket}";`);
    expect(text).toContain("set $api_keys_enabled false; # an operator's edit");
    expect(text).toContain(`server ${HOME.sidecar}; # the containers' sidecar`);
    expect(nativeConfProblems(text, HOME)).toEqual([]);
  });

  test('a file already right is left as it is', () => {
    const { text } = repairNativeConf(CONTAINER_CONF, HOME);
    expect(repairNativeConf(text, HOME)).toEqual({ text, changes: [] });
  });

  test('nativeConfProblems names each line and how to fix it', () => {
    const problems = nativeConfProblems(CONTAINER_CONF, HOME);
    expect(problems).toHaveLength(5);
    expect(problems[0]).toBe(
      `/srv/gw/config/nginx/conf.d/default.conf: the sidecar (upstream gateway_sidecar) is 127.0.0.1:8081, but the native run's sidecar is at ${HOME.sidecar}`,
    );
    expect(problems.at(-1)).toContain('gateway-config render /srv/gw/config --force');
  });
});
