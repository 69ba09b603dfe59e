import { ObjectConflictError, ObjectExistsError, ObjectMissingError } from '../errors.js';
import { decoyHash, hashPassword, verifyPassword } from './password.js';

export type LoginTarget = 'SYSTEM' | 'DOMAIN';

/** A user as the engine keeps it, in memory only. */
export interface StoredUser {
  /** Never reused, so a session of a deleted user cannot resume as a new user of that name. */
  readonly id: number;
  readonly name: string;
  target: LoginTarget;
  passwordHash: string;
  fullName: string;
  email: string;
  admin: boolean;
  enabled: boolean;
  lastLogin: string | null;
}

/** What a caller may set on a user; the password in clear, hashed here. */
export interface UserChanges {
  target?: LoginTarget;
  password?: string;
  fullName?: string;
  email?: string;
  admin?: boolean;
  enabled?: boolean;
}

/** Users of the engine, keyed by name (unique across targets). */
export class UserStore {
  private readonly users = new Map<string, StoredUser>();
  // Every authenticated call resolves its session's user by id.
  private readonly byIds = new Map<number, StoredUser>();
  private nextId = 1;

  constructor(private readonly now: () => number) {}

  /** Users ordered by name, optionally of one target. */
  list(target?: LoginTarget): StoredUser[] {
    return [...this.users.values()]
      .filter((u) => target === undefined || u.target === target)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  get(name: string): StoredUser {
    const user = this.users.get(name);
    if (!user) throw new ObjectMissingError('User', name);
    return user;
  }

  byId(id: number): StoredUser | undefined {
    return this.byIds.get(id);
  }

  /** Creates a user; ObjectExistsError when the name is taken. */
  async create(name: string, changes: UserChanges & { password: string }): Promise<StoredUser> {
    if (this.users.has(name)) throw new ObjectExistsError('User', name);
    const passwordHash = await hashPassword(changes.password);
    // Checked again: another create of the same name may have finished while hashing.
    if (this.users.has(name)) throw new ObjectExistsError('User', name);
    const user: StoredUser = {
      id: this.nextId++,
      name,
      target: changes.target ?? 'SYSTEM',
      passwordHash,
      fullName: changes.fullName ?? '',
      email: changes.email ?? '',
      admin: changes.admin ?? false,
      enabled: changes.enabled ?? true,
      lastLogin: null,
    };
    this.users.set(name, user);
    this.byIds.set(user.id, user);
    return user;
  }

  /** Applies the given changes; fields not given keep their values. */
  async update(name: string, changes: UserChanges): Promise<StoredUser> {
    this.get(name);
    const passwordHash =
      changes.password === undefined ? undefined : await hashPassword(changes.password);
    // Looked up after hashing: the user may have been deleted meanwhile.
    const user = this.get(name);
    const demotes =
      (changes.admin === false || changes.enabled === false) && this.isLastAdmin(user);
    if (demotes) throw lastAdminConflict(name);
    if (passwordHash !== undefined) user.passwordHash = passwordHash;
    if (changes.target !== undefined) user.target = changes.target;
    if (changes.fullName !== undefined) user.fullName = changes.fullName;
    if (changes.email !== undefined) user.email = changes.email;
    if (changes.admin !== undefined) user.admin = changes.admin;
    if (changes.enabled !== undefined) user.enabled = changes.enabled;
    return user;
  }

  /** Deletes a user and returns it; the last enabled administrator cannot go. */
  delete(name: string): StoredUser {
    const user = this.get(name);
    if (this.isLastAdmin(user)) throw lastAdminConflict(name);
    this.users.delete(name);
    this.byIds.delete(user.id);
    return user;
  }

  /** The enabled user matching name, target and password, or undefined; time does not tell which part failed. */
  async authenticate(
    name: string,
    target: LoginTarget,
    password: string,
  ): Promise<StoredUser | undefined> {
    const user = this.users.get(name);
    const ok = await verifyPassword(password, user?.passwordHash ?? (await decoyHash()));
    if (!user || !ok || user.target !== target || !user.enabled) return undefined;
    user.lastLogin = new Date(this.now()).toISOString();
    return user;
  }

  private isLastAdmin(user: StoredUser): boolean {
    if (!user.admin || !user.enabled) return false;
    return ![...this.users.values()].some((u) => u !== user && u.admin && u.enabled);
  }
}

function lastAdminConflict(name: string): ObjectConflictError {
  return new ObjectConflictError(
    `User "${name}" is the last enabled administrator.`,
    'Make another user an enabled administrator first.',
  );
}
