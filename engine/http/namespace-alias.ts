import type { RequestHandler } from 'express';

/** Where real Delphix engines serve everything, and where their clients hard-code their calls. */
export const DELPHIX_NAMESPACE = '/resources/json/delphix/';
/** Where this engine serves everything (the protocol's session namespace). */
export const SERVICE_NAMESPACE = '/resources/json/service/';

/**
 * Serves `/resources/json/delphix/...` as `/resources/json/service/...`: dxtoolkit, the
 * virtualization SDK, delphixpy and the Ruby and .NET bindings hard-code that prefix, and the
 * protocol names the other. One route table, two prefixes; every rule (access, the login-only
 * rule before login) is the same, because it is the same route.
 */
export const delphixNamespaceAlias: RequestHandler = (req, _res, next) => {
  if (req.url.startsWith(DELPHIX_NAMESPACE)) {
    req.url = SERVICE_NAMESPACE + req.url.slice(DELPHIX_NAMESPACE.length);
  }
  next();
};
