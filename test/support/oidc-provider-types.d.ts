// oidc-provider ships no types (and @types/oidc-provider lags its major versions); the tests
// use only its constructor and request handler, so this is all they need to declare.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
