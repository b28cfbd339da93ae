// The claim-check store against the suite's real PostgreSQL: what is sealed opens only with its
// handle, for its purpose, while it lives; it is gone once discarded or past its TTL; the table
// holds neither the plaintext nor the handle; keys rotate (old records still open, new ones use
// the new key); a tampered record does not open; each record has a key of its own, derived from a
// secret that only its handle holds (the claim-check key and the table open nothing); a card lives
// minutes at most; a failed delete is logged, counted and retried.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { MetricMeter } from '@temporalio/common';
import { ClaimCheckStore, SecretUnavailableError } from '../../src/claim-check/store';
import { isClaimHandle } from '../../src/shared/claim-check';
import { setProcessMetricMeterSource } from '../../src/telemetry/metrics';
import { claimCheckDatabaseUrl } from '../support/stack';

const key = (id: string, fill: number) => ({ id, key: Buffer.alloc(32, fill) });
const stores: ClaimCheckStore[] = [];
const connect = async (keys = [key('k1', 1)], ttlMs = 60_000, activeKeyId?: string) => {
  const s = await ClaimCheckStore.connect({ databaseUrl: claimCheckDatabaseUrl(), keys, ttlMs, activeKeyId });
  stores.push(s);
  return s;
};
afterAll(() => Promise.all(stores.map((s) => s.close())));

// The store runs named statements ({ name, text, values }); anything else passes a string.
type Statement = string | pg.QueryConfig;
const isBatchDelete = (statement: Statement) =>
  /^DELETE .* ANY/.test(typeof statement === 'string' ? statement : statement.text);
const gone = (p: Promise<unknown>) => expect(p).rejects.toBeInstanceOf(SecretUnavailableError);

/** The parts of a handle as the test reads them (not the store's code): 16 bytes of record name, 32 of secret. */
const handleBytes = (handle: string) => Buffer.from(handle.slice(3), 'base64url');
const recordIdOf = (handle: string) => createHash('sha256').update(handleBytes(handle).subarray(0, 16)).digest();

describe('sealing and opening', () => {
  it('a sealed value opens with its handle and purpose, and no longer once discarded', async () => {
    const store = await connect();
    const card = { number: '4000056655665556', cvv: '987', expiryMonth: '07', expiryYear: '31' };
    const handle = await store.seal('card', card);
    expect(isClaimHandle(handle)).toBe(true);
    expect(await store.open(handle, 'card')).toEqual(card);
    expect(await store.open(handle, 'card')).toEqual(card); // opening does not consume: the activity deletes once the service answered
    await gone(store.open(handle, 'pin')); // sealed as a card: it is no PIN
    await store.discard(handle);
    await gone(store.open(handle, 'card'));
    await store.discard(handle); // idempotent
  });

  it('discardSoon: this process stops opening the handle at once; the batch deletes every waiting record in one go', async () => {
    const [worker, other] = [await connect(), await connect()];
    const handles = await Promise.all(['1111', '2222', '3333'].map((pin) => worker.seal('pin', pin)));
    for (const h of handles) worker.discardSoon(h);
    for (const h of handles) await gone(worker.open(h, 'pin'));
    // Another process sees the records until the batch has run (the TTL bounds that in any case).
    expect(await other.open(handles[0], 'pin')).toBe('1111');
    await worker.flushDiscards();
    for (const h of handles) await gone(other.open(h, 'pin'));
    const client = new pg.Client({ connectionString: claimCheckDatabaseUrl() });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT count(*)::int AS n FROM claim_check_records WHERE id = ANY($1)', [
        handles.map(recordIdOf),
      ]);
      expect(rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('a discarded handle waiting for its batch is deleted when the store closes', async () => {
    const [worker, other] = [
      await ClaimCheckStore.connect({ databaseUrl: claimCheckDatabaseUrl(), keys: [key('k1', 1)], ttlMs: 60_000 }),
      await connect(),
    ];
    const handle = await worker.seal('otp', '554433');
    worker.discardSoon(handle);
    await worker.close();
    await gone(other.open(handle, 'otp'));
  });

  it('expires at its TTL and the sweeper deletes it; unknown and malformed handles do not open', async () => {
    const store = await connect();
    const handle = await store.seal('otp', '482913', 50);
    await new Promise((r) => setTimeout(r, 150));
    await gone(store.open(handle, 'otp'));
    expect(await store.sweepExpired()).toBeGreaterThanOrEqual(1);
    await gone(store.open('cc_AAAAAAAAAAAAAAAAAAAAAA', 'otp'));
    await gone(store.open('x'.repeat(10_000), 'otp'));
    await expect(store.seal('otp', '1', 0)).rejects.toThrow('ttlMs');
  });

  it('the table holds ciphertext only: neither the secret nor the handle appears in any column', async () => {
    const store = await connect();
    const handle = await store.seal('pin', '7391');
    const client = new pg.Client({ connectionString: claimCheckDatabaseUrl() });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT * FROM claim_check_records');
      const dump = JSON.stringify(
        rows.map((r: Record<string, unknown>) =>
          Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('latin1') : v])),
        ),
      );
      expect(dump).not.toContain('7391');
      expect(dump).not.toContain(handle);
      expect(dump).not.toContain(handle.slice(3));
    } finally {
      await client.end();
    }
  });
});

describe('a key per record (the claim-check key alone opens nothing)', () => {
  const master = key('k1', 1);
  const rowOf = async (handle: string) =>
    (
      await adminQuery<{ iv: Buffer; sealed: Buffer; key_id: string; purpose: string; version: number }>(
        'SELECT iv, sealed, key_id, purpose, version FROM claim_check_records WHERE id = $1',
        [recordIdOf(handle)],
      )
    )[0];
  /** AES-256-GCM open of a row with a given key and AAD; undefined when it does not open. */
  const tryOpen = (row: { iv: Buffer; sealed: Buffer }, k: Buffer, aad: string) => {
    try {
      const d = createDecipheriv('aes-256-gcm', k, row.iv);
      d.setAAD(Buffer.from(aad));
      d.setAuthTag(row.sealed.subarray(row.sealed.length - 16));
      return Buffer.concat([d.update(row.sealed.subarray(0, row.sealed.length - 16)), d.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  };

  it('a handle is 48 random bytes; the row read from PostgreSQL does not open with the claim-check key, only with the secret in the handle', async () => {
    const store = await connect([master]);
    const card = { number: '4000056655665556', cvv: '987', expiryMonth: '07', expiryYear: '31' };
    const handle = await store.seal('card', card);
    expect(handle).toMatch(/^cc_[A-Za-z0-9_-]{64}$/);
    const row = await rowOf(handle);
    expect(row).toMatchObject({ key_id: 'k1', purpose: 'card', version: 2 });
    const id = recordIdOf(handle);
    const aads = [`v2|${id.toString('hex')}|card|k1`, `${handle}|card|k1`, ''];
    // An attacker with the master key and a dump (or backup) of the table, but no handle:
    for (const aad of aads) expect(tryOpen(row, master.key, aad)).toBeUndefined();
    // ...nor a key derived from the master key and the row's id alone.
    const info = Buffer.concat([Buffer.from('payflow claim-check record v2 '), id]);
    expect(
      tryOpen(row, Buffer.from(hkdfSync('sha256', master.key, Buffer.alloc(0), info, 32)), aads[0]),
    ).toBeUndefined();
    // With the secret that only the handle holds, the same derivation opens it (the control).
    const secret = handleBytes(handle).subarray(16);
    const derived = Buffer.from(hkdfSync('sha256', master.key, secret, info, 32));
    expect(JSON.parse(tryOpen(row, derived, aads[0])!)).toEqual(card);
    // The table holds neither the secret nor the handle.
    const dump = JSON.stringify(Object.values(row).map((v) => (Buffer.isBuffer(v) ? v.toString('hex') : v)));
    expect(dump).not.toContain(secret.toString('hex'));
    expect(await store.open(handle, 'card')).toEqual(card);
  });

  it("a handle with another secret (same record name) opens nothing: the key is the secret's", async () => {
    const store = await connect([master]);
    const handle = await store.seal('pin', '4321');
    const bytes = handleBytes(handle);
    bytes[47] ^= 0xff;
    await gone(store.open(`cc_${bytes.toString('base64url')}`, 'pin'));
    expect(await store.open(handle, 'pin')).toBe('4321');
  });

  it('a version-1 record (sealed under the claim-check key itself before per-record keys) still opens until it expires', async () => {
    const store = await connect([master]);
    const handle = `cc_${randomBytes(16).toString('base64url')}`;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', master.key, iv);
    cipher.setAAD(Buffer.from(`${handle}|otp|k1`));
    const sealed = Buffer.concat([cipher.update(JSON.stringify('246810')), cipher.final(), cipher.getAuthTag()]);
    // As the code before this version wrote it: no version column given (the migration's default, 1).
    await adminQuery(
      "INSERT INTO claim_check_records (id, purpose, key_id, iv, sealed, expires_at) VALUES ($1, 'otp', 'k1', $2, $3, now() + interval '1 minute')",
      [createHash('sha256').update(handle).digest(), iv, sealed],
    );
    expect(await store.open(handle, 'otp')).toBe('246810');
    await store.discard(handle);
    await gone(store.open(handle, 'otp'));
  });
});

describe('reseal, and the lifetime of card data', () => {
  it('reseal replaces a live record under the same handle (a card without its CVV); nothing else is resealed', async () => {
    const store = await connect();
    const card = { number: '5200000000001096', cvv: '321', expiryMonth: '12', expiryYear: '29' };
    const handle = await store.seal('card', card);
    const before = await adminQuery<{ sealed: Buffer; expires_at: Date }>(
      'SELECT sealed, expires_at FROM claim_check_records WHERE id = $1',
      [recordIdOf(handle)],
    );
    expect(await store.reseal(handle, 'card', { number: card.number, expiryMonth: '12', expiryYear: '29' })).toBe(true);
    expect(await store.open(handle, 'card')).toEqual({ number: card.number, expiryMonth: '12', expiryYear: '29' });
    const after = await adminQuery<{ sealed: Buffer; expires_at: Date }>(
      'SELECT sealed, expires_at FROM claim_check_records WHERE id = $1',
      [recordIdOf(handle)],
    );
    expect(after[0].sealed.equals(before[0].sealed)).toBe(false);
    expect(after[0].expires_at).toEqual(before[0].expires_at); // the TTL is not extended
    expect(await store.reseal(handle, 'pin', '1')).toBe(false); // another purpose
    expect(await store.reseal(`cc_${randomBytes(48).toString('base64url')}`, 'card', {})).toBe(false); // no record
    store.discardSoon(handle);
    expect(await store.reseal(handle, 'card', card)).toBe(false); // discarded: never sealed again
  });

  it('card data lives at most cardTtlMs (minutes by default), whatever TTL is asked; other purposes keep theirs', async () => {
    const store = await ClaimCheckStore.connect({
      databaseUrl: claimCheckDatabaseUrl(),
      keys: [key('k1', 1)],
      ttlMs: 3_600_000,
      cardTtlMs: 60_000,
    });
    stores.push(store);
    const lifetime = async (handle: string) =>
      (
        await adminQuery<{ s: number }>(
          'SELECT extract(epoch FROM expires_at - now())::float8 AS s FROM claim_check_records WHERE id = $1',
          [recordIdOf(handle)],
        )
      )[0].s;
    expect(await lifetime(await store.seal('card', { cvv: '1' }))).toBeLessThanOrEqual(60);
    expect(await lifetime(await store.seal('pos-card', { track2: 'x' }, 7_200_000))).toBeLessThanOrEqual(60);
    expect(await lifetime(await store.seal('card', { cvv: '1' }, 30_000))).toBeLessThanOrEqual(30);
    expect(await lifetime(await store.seal('otp', '1'))).toBeGreaterThan(3_500);
    const byDefault = await connect([key('k1', 1)], 24 * 3_600_000);
    expect(await lifetime(await byDefault.seal('card', { cvv: '1' }))).toBeLessThanOrEqual(600);
    expect(await lifetime(await byDefault.seal('card', { cvv: '1' }))).toBeGreaterThan(590);
  });
});

describe('a failed delete of used records', () => {
  afterEach(() => setProcessMetricMeterSource(() => undefined));

  it('is logged (counts, no handle), counted and retried until the records are gone; this process refuses them meanwhile', async () => {
    const added: { value: number; result: unknown }[] = [];
    const meter = {
      createCounter: (name: string) => ({
        add: (value: number, tags: { result: unknown }) =>
          name === 'payflow_claim_check_discard_failures' && added.push({ value, result: tags.result }),
      }),
    };
    setProcessMetricMeterSource(() => meter as unknown as MetricMeter);
    const warnings: unknown[][] = [];
    const errors: unknown[][] = [];
    const logger = { warn: (...a: unknown[]) => warnings.push(a), error: (...a: unknown[]) => errors.push(a) };
    const worker = await ClaimCheckStore.connect({
      databaseUrl: claimCheckDatabaseUrl(),
      keys: [key('k1', 1)],
      ttlMs: 60_000,
      logger,
      discardRetryMs: 50,
    });
    stores.push(worker);
    const other = await connect();
    const handle = await worker.seal('card', { number: '4000056655665556', cvv: '987' });
    const pool = (worker as unknown as { pool: pg.Pool }).pool;
    const query = pool.query.bind(pool);
    let failing = 2;
    jest
      .spyOn(pool, 'query')
      .mockImplementation(((statement: Statement, params: unknown[]) =>
        isBatchDelete(statement) && failing-- > 0
          ? Promise.reject(new Error('connection terminated'))
          : query(statement, params)) as never);
    worker.discardSoon(handle);
    await worker.flushDiscards(); // fails: reported, not thrown
    await gone(worker.open(handle, 'card'));
    expect(await other.open(handle, 'card')).toMatchObject({ cvv: '987' });
    await eventually(() => gone(other.open(handle, 'card'))); // the second retry deletes it
    expect(added).toEqual([
      { value: 1, result: 'retrying' },
      { value: 1, result: 'retrying' },
    ]);
    expect(warnings.map(([fields]) => fields)).toEqual([
      expect.objectContaining({ records: 1, attempt: 1 }),
      expect.objectContaining({ records: 1, attempt: 2 }),
    ]);
    expect(JSON.stringify(warnings)).not.toContain(handle.slice(3, 20));
    expect(errors).toEqual([]);
  });

  it('gives up after 5 attempts with an error and a gave_up count: the TTL ends the record', async () => {
    const added: { value: number; result: unknown }[] = [];
    setProcessMetricMeterSource(
      () =>
        ({
          createCounter: () => ({
            add: (value: number, tags: { result: unknown }) => added.push({ value, result: tags.result }),
          }),
        }) as unknown as MetricMeter,
    );
    const errors: unknown[][] = [];
    const logger = { warn: () => undefined, error: (...a: unknown[]) => errors.push(a) };
    const store = await ClaimCheckStore.connect({
      databaseUrl: claimCheckDatabaseUrl(),
      keys: [key('k1', 1)],
      ttlMs: 60_000,
      logger,
      discardRetryMs: 10,
    });
    stores.push(store);
    const pool = (store as unknown as { pool: pg.Pool }).pool;
    const query = pool.query.bind(pool);
    jest
      .spyOn(pool, 'query')
      .mockImplementation(((statement: Statement, params: unknown[]) =>
        isBatchDelete(statement)
          ? Promise.reject(new Error('read-only transaction'))
          : query(statement, params)) as never);
    store.discardSoon(await store.seal('otp', '1'));
    await store.flushDiscards();
    await eventually(async () => expect(errors).toHaveLength(1));
    expect(errors[0][0]).toMatchObject({ records: 1, attempts: 5 });
    expect(added.map((a) => a.result)).toEqual(['retrying', 'retrying', 'retrying', 'retrying', 'gave_up']);
  });
});

describe('keys', () => {
  it('rotation: records sealed under the old key still open after a new key leads; new ones are sealed under it', async () => {
    const before = await connect([key('old', 2)]);
    const oldHandle = await before.seal('bvn', '22212345678');
    const after = await connect([key('new', 3), key('old', 2)]);
    expect(await after.open(oldHandle, 'bvn')).toBe('22212345678');
    const newHandle = await after.seal('bvn', '22287654321');
    const withoutNew = await connect([key('old', 2)]);
    await gone(withoutNew.open(newHandle, 'bvn')); // sealed under "new", which this process does not hold
    expect(await withoutNew.open(oldHandle, 'bvn')).toBe('22212345678');
  });

  it('a record whose ciphertext was tampered with does not open', async () => {
    const store = await connect([key('k9', 9)]);
    const handle = await store.seal('pos-card', { track2: '5061000000000000=2512' });
    const client = new pg.Client({ connectionString: claimCheckDatabaseUrl() });
    await client.connect();
    try {
      await client.query(
        "UPDATE claim_check_records SET sealed = set_byte(sealed, 0, (get_byte(sealed, 0) + 1) % 256) WHERE key_id = 'k9'",
      );
    } finally {
      await client.end();
    }
    await gone(store.open(handle, 'pos-card'));
  });

  it('refuses an active key it does not hold and keys that are not 32 bytes', async () => {
    await expect(connect([key('a', 1)], 1000, 'b')).rejects.toThrow('active key');
    await expect(connect([{ id: 'short', key: Buffer.alloc(16) }])).rejects.toThrow('32 bytes');
  });
});

/** A store on a schema of its own (search_path), created empty, so the migration and the counts are its alone. */
const freshSchema = async () => {
  const schema = `cc_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE SCHEMA ${schema}`);
  schemas.push(schema);
  const url = new URL(claimCheckDatabaseUrl());
  url.searchParams.set('options', `-c search_path=${schema}`);
  url.searchParams.set('application_name', schema);
  return { schema, url: url.toString() };
};
const schemas: string[] = [];
afterAll(() => Promise.all(schemas.map((s) => adminQuery(`DROP SCHEMA ${s} CASCADE`))));

async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: claimCheckDatabaseUrl() });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe('schema and pool', () => {
  it('creates its table and expiry index in an empty database, and counts only live records', async () => {
    const { schema, url } = await freshSchema();
    const store = await ClaimCheckStore.connect({ databaseUrl: url, keys: [key('k1', 1)], ttlMs: 60_000 });
    stores.push(store);
    const indexes = await adminQuery<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = $1', [
      schema,
    ]);
    expect(indexes.map((i) => i.indexname).sort()).toEqual([
      'claim_check_records_expires_at',
      'claim_check_records_pkey',
    ]);
    expect(await store.liveCount()).toBe(0);
    const handle = await store.seal('otp', '112233');
    await store.seal('otp', '445566', 20);
    await new Promise((r) => setTimeout(r, 60));
    expect(await store.liveCount()).toBe(1); // the expired one is not counted
    expect(await store.open(handle, 'otp')).toBe('112233');
  });

  it('a process that starts while another migrates waits for its whole migration (one transaction under the lock)', async () => {
    const { schema, url } = await freshSchema();
    // The table exists and the test holds it locked: the first migration stops at its index.
    await adminQuery(
      `CREATE TABLE ${schema}.claim_check_records (id bytea PRIMARY KEY, purpose text NOT NULL, key_id text NOT NULL, iv bytea NOT NULL, sealed bytea NOT NULL, expires_at timestamptz NOT NULL)`,
    );
    const holder = new pg.Client({ connectionString: claimCheckDatabaseUrl() });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${schema}.claim_check_records IN ACCESS EXCLUSIVE MODE`);
    const connecting = () => ClaimCheckStore.connect({ databaseUrl: url, keys: [key('k1', 1)], ttlMs: 60_000 });
    const waitsOf = () =>
      adminQuery<{ wait_event: string }>(
        "SELECT wait_event FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' ORDER BY wait_event",
        [schema],
      );
    const first = connecting();
    let second: ReturnType<typeof connecting> | undefined;
    try {
      await eventually(async () => expect(await waitsOf()).toHaveLength(1));
      second = connecting();
      await eventually(async () => expect(await waitsOf()).toHaveLength(2));
      // The second waits for the migration lock, not beside the first at the table.
      expect((await waitsOf()).map((w) => w.wait_event)).toEqual(['advisory', 'relation']);
    } finally {
      await holder.query('COMMIT');
      await holder.end();
      stores.push(...(await Promise.all([first, ...(second ? [second] : [])])));
    }
  });

  it('a migration that fails rejects connect and leaves no connection open', async () => {
    const { schema, url } = await freshSchema();
    // A view of that name: CREATE TABLE IF NOT EXISTS passes over it, the index on it fails.
    await adminQuery(`CREATE VIEW ${schema}.claim_check_records AS SELECT now() AS expires_at`);
    await expect(ClaimCheckStore.connect({ databaseUrl: url, keys: [key('k1', 1)], ttlMs: 60_000 })).rejects.toThrow();
    // A backend leaves pg_stat_activity a moment after its connection closed.
    await eventually(async () =>
      expect(await adminQuery('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [schema])).toHaveLength(0),
    );
  });

  it('holds at most poolSize connections (4 by default), however many calls wait', async () => {
    const connectionsOf = async (poolSize?: number) => {
      const { schema, url } = await freshSchema();
      const store = await ClaimCheckStore.connect({ databaseUrl: url, keys: [key('k1', 1)], ttlMs: 60_000, poolSize });
      stores.push(store);
      await Promise.all(Array.from({ length: 12 }, (_, i) => store.seal('otp', String(i))));
      return (await adminQuery('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [schema])).length;
    };
    expect(await connectionsOf()).toBe(4);
    expect(await connectionsOf(2)).toBe(2);
  });

  it('refuses a key list without keys', async () => {
    await expect(connect([])).rejects.toThrow('active key');
  });
});

describe('handles and records', () => {
  it('a record moved under another handle does not open: the handle, purpose and key id are bound to the ciphertext', async () => {
    const store = await connect([key('k7', 7)]);
    const [mine, theirs] = [await store.seal('card', { cvv: '111' }), await store.seal('card', { cvv: '222' })];
    await adminQuery(
      'UPDATE claim_check_records SET iv = src.iv, sealed = src.sealed FROM claim_check_records src WHERE claim_check_records.id = $1 AND src.id = $2',
      [recordIdOf(mine), recordIdOf(theirs)],
    );
    await gone(store.open(mine, 'card'));
    expect(await store.open(theirs, 'card')).toEqual({ cvv: '222' });
  });

  it('the unavailable error names the purpose and asks for the secret again', async () => {
    const store = await connect();
    const err = await store.open('cc_AAAAAAAAAAAAAAAAAAAAAA', 'pin').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretUnavailableError);
    expect(err).toMatchObject({ name: 'SecretUnavailableError', purpose: 'pin' });
    expect((err as Error).message).toBe(
      'the sealed pin is no longer available (already used, expired or unknown): submit it again',
    );
  });

  it('anything but a handle (not a string, another length, another character) is refused without a database query', async () => {
    // Not in `stores`: closed here, and a pool ends only once.
    const store = await ClaimCheckStore.connect({
      databaseUrl: claimCheckDatabaseUrl(),
      keys: [key('k1', 1)],
      ttlMs: 60_000,
    });
    const handle = await store.seal('otp', '9090');
    await store.close(); // from here, any query would fail with the pool's own error
    for (const bad of [undefined, 42, 'x'.repeat(65), 'cc_short', `cc_${'A'.repeat(21)}!`] as unknown as string[]) {
      await gone(store.open(bad, 'otp'));
      await expect(store.discard(bad)).resolves.toBeUndefined();
      expect(() => store.discardSoon(bad)).not.toThrow();
    }
    await expect(store.open(handle, 'otp')).rejects.not.toBeInstanceOf(SecretUnavailableError);
  });
});

describe('batched discards and the sweeper', () => {
  it('discardSoon deletes a waiting record by itself, without a flush', async () => {
    const [worker, other] = [await connect(), await connect()];
    const handle = await worker.seal('otp', '3141');
    worker.discardSoon(handle);
    await eventually(() => expect(other.open(handle, 'otp')).rejects.toBeInstanceOf(SecretUnavailableError));
  });

  it('200 waiting discards run their batch at once, and the next batch counts from zero', async () => {
    const store = await connect();
    const flush = jest.spyOn(store, 'flushDiscards');
    for (let i = 0; i < 199; i++) store.discardSoon(`cc_${String(i).padStart(22, '0')}`);
    expect(flush).not.toHaveBeenCalled();
    store.discardSoon(`cc_${'1'.repeat(19)}199`);
    expect(flush).toHaveBeenCalledTimes(1);
    await flush.mock.results[0].value;
    store.discardSoon(`cc_${'n'.repeat(22)}`);
    expect(flush).toHaveBeenCalledTimes(1);
  });

  it('the sweeper deletes expired records until the store closes', async () => {
    const { schema, url } = await freshSchema();
    // Not in `stores`: closed here, and a pool ends only once.
    const store = await ClaimCheckStore.connect({ databaseUrl: url, keys: [key('k1', 1)], ttlMs: 60_000 });
    await store.seal('otp', '777', 20);
    const errors: unknown[] = [];
    store.startSweeper(25, (err) => errors.push(err));
    await eventually(async () =>
      expect(await adminQuery(`SELECT 1 FROM ${schema}.claim_check_records`)).toHaveLength(0),
    );
    await store.close();
    await new Promise((r) => setTimeout(r, 200)); // a sweep after close would fail on the closed pool
    expect(errors).toEqual([]);
  });

  it("the sweeper's timer is unref'd: it alone does not keep alive a process that never closes the store", async () => {
    const store = await connect();
    const setInterval = jest.spyOn(global, 'setInterval');
    try {
      store.startSweeper(60_000);
      expect(setInterval).toHaveBeenCalledTimes(1);
      expect((setInterval.mock.results[0].value as NodeJS.Timeout).hasRef()).toBe(false);
    } finally {
      setInterval.mockRestore();
    }
  });
});

/** Retries `check` until it passes (the batch timer and the sweeper run on their own). */
async function eventually(check: () => Promise<unknown>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
