/** Query values: the simple kinds GET accepts. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * What a resource API (`users.ts`) needs of a logged-in client: one call. Apart from
 * `engine-client.ts`, so the client can build its resource APIs without them importing it back.
 */
export interface EngineCall {
  call<T = unknown>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    input?: { query?: Query; body?: unknown },
  ): Promise<T>;
}
