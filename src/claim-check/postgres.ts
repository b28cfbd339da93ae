// The claim-check's PostgreSQL, as the stores with a table in it open it (the claim-check records,
// src/claim-check/store.ts, and the virtual-account credit records, src/virtual-accounts/credit-store.ts):
// one way to open the pool and create a table idempotently, so both fail and clean up alike.
import pg from 'pg';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database */
  databaseUrl: string;
  /** Connections in the pool (default 4). */
  poolSize?: number;
}

/**
 * Opens a pool, builds the store on it and runs its schema statements in one transaction under the
 * advisory lock `schemaLock` (several processes may migrate at once). When anything fails the pool
 * is closed and the error thrown.
 */
export async function connectPostgresStore<S>(
  opts: PostgresStoreOptions,
  schema: { lock: number; statements: readonly string[] },
  create: (pool: pg.Pool) => S,
): Promise<S> {
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 4 });
  // An idle client's error (e.g. the server restarted) must not end the process.
  pool.on('error', () => undefined);
  try {
    const store = create(pool);
    await migrate(pool, schema);
    return store;
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}

async function migrate(pool: pg.Pool, schema: { lock: number; statements: readonly string[] }): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [schema.lock]);
    for (const statement of schema.statements) await client.query(statement);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
