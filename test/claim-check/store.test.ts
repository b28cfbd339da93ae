// The claim-check store against the suite's real PostgreSQL: what is sealed opens only with its
// handle, for its purpose, while it lives; it is gone once discarded or past its TTL; the table
// holds neither the plaintext nor the handle; keys rotate (old records still open, new ones use
// the new key); a tampered record does not open.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { ClaimCheckStore, SecretUnavailableError } from '../../src/claim-check/store';
import { isClaimHandle } from '../../src/shared/claim-check';
import { claimCheckDatabaseUrl } from '../support/stack';

const key = (id: string, fill: number) => ({ id, key: Buffer.alloc(32, fill) });
const stores: ClaimCheckStore[] = [];
const connect = async (keys = [key('k1', 1)], ttlMs = 60_000, activeKeyId?: string) => {
  const s = await ClaimCheckStore.connect({ databaseUrl: claimCheckDatabaseUrl(), keys, ttlMs, activeKeyId });
  stores.push(s);
  return s;
};
afterAll(() => Promise.all(stores.map((s) => s.close())));

const gone = (p: Promise<unknown>) => expect(p).rejects.toBeInstanceOf(SecretUnavailableError);

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
        handles.map((h) => createHash('sha256').update(h).digest()),
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
