/** Tells this sidecar's own nginx that decisions are no longer valid. */
export interface DecisionInvalidator {
  /** Decisions about these API clients (row ids) are dead. Never throws. */
  clients(ids: readonly number[]): Promise<boolean>;
  /** Every decision is dead (after lost notifications). Never throws. */
  all(): Promise<boolean>;
  /**
   * These API clients (row ids) are new: nginx forgets that their ids were unknown, and keeps
   * whatever it learnt about them since. Never throws.
   */
  created(ids: readonly number[]): Promise<boolean>;
}

/** No nginx to tell (the sidecar runs alone, e.g. in tests): nothing to invalidate. */
export const NO_INVALIDATOR: DecisionInvalidator = {
  clients: async () => true,
  all: async () => true,
  created: async () => true,
};
