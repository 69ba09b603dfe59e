import type pg from 'pg';

/**
 * Runs `work` on one connection between BEGIN and COMMIT, or ROLLBACK when `commit(result)`
 * says no (an outcome such as a unique-constraint collision, which aborted the transaction
 * anyway) or `work` throws. A connection whose BEGIN, COMMIT or ROLLBACK failed is destroyed,
 * never handed to the next caller in an unknown state.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (tx: pg.PoolClient) => Promise<T>,
  commit: (result: T) => boolean = () => true,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const end = async (statement: 'COMMIT' | 'ROLLBACK') => {
    try {
      await client.query(statement);
    } catch (err) {
      broken = err as Error;
      throw err;
    }
  };
  try {
    try {
      await client.query('BEGIN');
    } catch (err) {
      broken = err as Error;
      throw err;
    }
    let result: T;
    try {
      result = await work(client);
    } catch (err) {
      await end('ROLLBACK').catch(() => undefined);
      throw err;
    }
    await end(commit(result) ? 'COMMIT' : 'ROLLBACK');
    return result;
  } finally {
    client.release(broken);
  }
}
