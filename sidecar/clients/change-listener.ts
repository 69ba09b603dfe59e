import pg from 'pg';
import type { Logger } from '../log.js';

export const CHANGE_CHANNEL = 'api_clients_changed';

/** What a change listener reports to whoever caches API clients. */
export interface ChangeSink {
  /** A client changed or was deleted (`'*'`: possibly all of them). */
  changed(id: number | '*'): void;
  /** Notifications may have been missed: stop trusting anything cached. */
  lost(): void;
  /** Listening again: caching may resume, from empty. */
  listening(): void;
}

/**
 * Holds one dedicated connection in `LISTEN api_clients_changed` and reconnects forever
 * when it drops. While it is down the sink is told, so caches stop being used: a missed
 * notification could otherwise keep a revoked key alive.
 */
export class ChangeListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private attempt = 0;

  constructor(
    private readonly databaseUrl: string,
    private readonly sink: ChangeSink,
    private readonly log: Logger,
  ) {}

  /** Resolves once the first LISTEN is in place, or after the first failure (it keeps retrying). */
  async start(): Promise<void> {
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      connectionTimeoutMillis: 3_000,
      application_name: 'gateway-sidecar-listener',
      keepAlive: true,
    });
    let failed = false;
    const fail = (err: Error | undefined) => {
      if (failed) return;
      failed = true;
      if (this.client === client) this.client = null;
      this.sink.lost();
      client.end().catch(() => {});
      if (!this.stopped) {
        this.log.warn('change listener lost its database connection', { error: err?.message });
        this.scheduleRetry();
      }
    };
    client.on('error', fail);
    client.on('end', () => fail(undefined));
    client.on('notification', (msg) => {
      if (msg.channel !== CHANGE_CHANNEL) return;
      const id = msg.payload === '*' ? '*' : Number(msg.payload);
      this.sink.changed(Number.isSafeInteger(id) ? id : '*');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
      if (this.stopped) {
        await client.end();
        return;
      }
      this.client = client;
      this.attempt = 0;
      this.sink.listening();
    } catch (err) {
      fail(err as Error);
    }
  }

  private scheduleRetry(): void {
    this.attempt += 1;
    const delay = Math.min(200 * 2 ** (this.attempt - 1), 5_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }
}
