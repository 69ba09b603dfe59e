import { ensureConfigDir, loadSettings, type RawSettings } from '../../generator/index.js';
import { gatewayHome } from '../../native/home.js';

/**
 * Renders a native gateway's configuration directory before its first start, with the app
 * upstream pointed elsewhere (the static responder) and any other settings given, the way an
 * operator edits `default.conf`: `npm start` completes the directory but never overwrites it,
 * so the runner then serves this file, with its own sidecar, control socket and port.
 *
 * The settings are layered as the runner layers them (native/gateway.ts): the run's
 * environment (GATEWAY_SETTINGS, GATEWAY_FQDN, GATEWAY_HTTPS_PORT), then the home's paths;
 * only `upstreams.app` differs. A drift from the runner shows at once: its `nginx -t` or the
 * stack check fails.
 */
export async function renderGatewayConfig(
  homeDir: string,
  env: Record<string, string>,
  appUpstream: string,
): Promise<void> {
  await ensureConfigDir(
    gatewayHome(homeDir).config,
    await gatewaySettings(homeDir, env, appUpstream),
  );
}

/** The settings renderGatewayConfig renders, with `more` over them (the tracing copy's). */
export function gatewaySettings(
  homeDir: string,
  env: Record<string, string>,
  appUpstream: string,
  more: RawSettings = {},
) {
  const home = gatewayHome(homeDir);
  return loadSettings({
    env,
    overrides: {
      config_dir: home.config,
      upstreams: { app: appUpstream, sidecar: `unix:${home.sidecarSocket}` },
      auth_cache: { control_socket: home.controlSocket },
      ...more,
    },
  });
}
