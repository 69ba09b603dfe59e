import type { EngineCall, Query } from './call.js';
import type { LoginTarget, User, UserInput, UserList } from './types.js';

const COLLECTION = '/resources/json/service/user';

function objectPath(name: string): string {
  return `${COLLECTION}/${encodeURIComponent(name)}`;
}

/** The engine's users, through a logged-in client. */
export class UsersApi {
  constructor(private readonly client: EngineCall) {}

  list(query: { target?: LoginTarget; offset?: number; limit?: number } = {}): Promise<UserList> {
    return this.client.call<UserList>('GET', COLLECTION, { query: query as Query });
  }

  /** The logged-in user. */
  current(): Promise<User> {
    return this.client.call<User>('GET', `${COLLECTION}/current`);
  }

  get(name: string): Promise<User> {
    return this.client.call<User>('GET', objectPath(name));
  }

  /** Creates a user; fields the session's version does not know must be left out. */
  create(user: UserInput & { name: string; password: string }): Promise<User> {
    return this.client.call<User>('POST', COLLECTION, { body: { type: 'User', ...user } });
  }

  /** Changes only the fields given. */
  update(name: string, changes: UserInput): Promise<User> {
    return this.client.call<User>('POST', objectPath(name), { body: { type: 'User', ...changes } });
  }

  /** Deletes a user with DELETE, or with `POST .../delete` when `viaPost` (for proxies that block DELETE). */
  delete(name: string, options: { viaPost?: boolean } = {}): Promise<User> {
    return options.viaPost
      ? this.client.call<User>('POST', `${objectPath(name)}/delete`)
      : this.client.call<User>('DELETE', objectPath(name));
  }
}
