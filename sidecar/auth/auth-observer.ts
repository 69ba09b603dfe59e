import type { Identity } from '../clients/store/api-client.js';
import type { AuthFailure } from './decision.js';

/**
 * Told of every decision, on the hot path: implementations only note it in memory and write
 * later (last use once a minute, failure counts every few seconds). Never throws, never waits.
 */
export interface AuthObserver {
  accepted(identity: Identity): void;
  refused(failure: AuthFailure): void;
}

export const NO_OBSERVER: AuthObserver = { accepted: () => {}, refused: () => {} };

/** Tells each observer in turn. */
export function observers(...list: AuthObserver[]): AuthObserver {
  return {
    accepted: (identity) => {
      for (const o of list) o.accepted(identity);
    },
    refused: (failure) => {
      for (const o of list) o.refused(failure);
    },
  };
}
