import type { Clock } from '../clock.js';

export interface CachePolicy {
  now: Clock;
  /** Age after which the value is refreshed in the background. */
  maxAgeMs: number;
  /** How long past `maxAgeMs` the value is still served while refreshing fails. */
  maxStaleMs: number;
  /** Minimum time between fetches asked for by `refetch` (the unknown-`kid` path). */
  cooldownMs: number;
}

/**
 * After a failed fetch, callers get the same error for this long instead of a new attempt,
 * so a dead or black-holed provider costs one request per second, not one per token.
 */
const RETRY_AFTER_FAILURE_MS = 1_000;

/**
 * One remotely fetched value (a discovery document, a key set) with the rules the hot path
 * needs: fetched once and shared by concurrent callers; served from memory while fresh;
 * refreshed in the background when old, and still served (bounded by `maxStaleMs`) if that
 * refresh fails, so a provider outage does not refuse tokens signed with keys already known.
 */
export class CachedResource<T> {
  private value: T | undefined;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private lastError: unknown;
  private inFlight: Promise<T> | null = null;

  constructor(
    private readonly load: () => Promise<T>,
    private readonly policy: CachePolicy,
    private readonly onBackgroundError: (err: unknown) => void,
  ) {}

  /** The cached value, fetching it when there is none (or it is too stale to trust). */
  async get(): Promise<T> {
    const now = this.policy.now();
    if (this.value !== undefined) {
      const age = now - this.fetchedAt;
      if (age <= this.policy.maxAgeMs) return this.value;
      if (age <= this.policy.maxAgeMs + this.policy.maxStaleMs) {
        if (!this.inFlight && now - this.attemptedAt >= RETRY_AFTER_FAILURE_MS) {
          this.fetch().catch(this.onBackgroundError);
        }
        return this.value;
      }
    }
    if (this.inFlight) return await this.inFlight;
    if (this.lastError !== undefined && now - this.attemptedAt < RETRY_AFTER_FAILURE_MS) {
      throw this.lastError;
    }
    return await this.fetch();
  }

  /**
   * Fetches again unless the last fetch is younger than the cooldown (then false at once):
   * the rate limit that keeps a stream of bogus `kid`s from hammering the provider.
   */
  async refetch(): Promise<boolean> {
    if (this.inFlight) {
      await this.inFlight;
      return true;
    }
    if (this.policy.now() - this.attemptedAt < this.policy.cooldownMs) return false;
    await this.fetch();
    return true;
  }

  private fetch(): Promise<T> {
    this.attemptedAt = this.policy.now();
    const attempt = this.load().then(
      (value) => {
        this.value = value;
        this.fetchedAt = this.policy.now();
        this.lastError = undefined;
        return value;
      },
      (err: unknown) => {
        this.lastError = err;
        throw err;
      },
    );
    this.inFlight = attempt;
    const clear = () => {
      if (this.inFlight === attempt) this.inFlight = null;
    };
    attempt.then(clear, clear);
    return attempt;
  }
}
