/**
 * The contract between nginx (its config and its Lua code) and the sidecar, defined once
 * (docs/decisions/20261122-nginx-sidecar-contract.md, 20261123-lua-decision-cache.md). The
 * generator turns these rows into nginx directives, `lua/gateway/contract.lua` and
 * `nginx-module/gateway_contract.h` are generated from them (a test fails on drift), and the
 * sidecar reads its header names from here. One file per format in common/contract/; this one
 * is the index every importer reads, so where a name is defined can change without them.
 */
export * from './contract/auth-frame.js';
export * from './contract/cached-records.js';
export * from './contract/change-feed.js';
export * from './contract/control-socket.js';
export * from './contract/key-table.js';
export * from './contract/nginx-module.js';
export * from './contract/nginx-names.js';
export * from './contract/permissions-text.js';
export * from './contract/rate-limits.js';
export * from './contract/request.js';
export * from './contract/sidecar-answer.js';
export * from './contract/sidecar-question.js';
