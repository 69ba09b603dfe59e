import type pg from 'pg';

/** A pool, or one connection checked out of it (inside a transaction): what a query needs. */
export type Queryable = Pick<pg.ClientBase, 'query'>;
