// The claim-check store: secrets sealed with AES-256-GCM into PostgreSQL for a short time, so
// that Temporal history (and the Web UI, and the codec server) never holds them, encrypted or not.
//
//  - seal(): a random 128-bit handle; the record is keyed by SHA-256 of the handle (a dump of the
//    table cannot be joined to workflows), sealed under the active claim-check key (separate from
//    the payload codec's keys), with the key id stored for rotation, and the handle, purpose and
//    key id bound as additional authenticated data.
//  - open(): the plaintext while the record lives; SecretUnavailableError when it was redeemed,
//    expired (TTL, default 15 minutes) or never existed.
//  - discardSoon(): the activity calls it once the service has answered the call that used it;
//    the deletes are batched (one statement for many records, off the payment's path), and this
//    process stops opening the handle at once. discard() deletes at once. sweepExpired() deletes
//    what outlived its TTL (a sweeper runs it periodically).
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import { connectPostgresStore } from './postgres';
import { isClaimHandle, type SecretPurpose } from '../shared/claim-check';

export interface ClaimCheckKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

export interface ClaimCheckStoreOptions {
  /** postgres://user:password@host:port/database */
  databaseUrl: string;
  keys: ClaimCheckKey[];
  /** Seals with this key; every listed key opens. Default: the first. */
  activeKeyId?: string;
  /** Default lifetime of a sealed record. */
  ttlMs: number;
  /** Connections in the pool (default 4). */
  poolSize?: number;
}

/** The handle does not open: redeemed, expired, unknown, sealed for another purpose, or under a key we no longer hold. */
export class SecretUnavailableError extends Error {
  constructor(readonly purpose: SecretPurpose) {
    super(`the sealed ${purpose} is no longer available (already used, expired or unknown): submit it again`);
    this.name = 'SecretUnavailableError';
  }
}

const TABLE = 'claim_check_records';
/** How long a discarded record may wait for its batch delete, and how many make a batch at once. */
const DISCARD_BATCH_MS = 1_000;
const DISCARD_BATCH_SIZE = 200;
const SCHEMA = {
  lock: 0x636c616d, // advisory lock id: several processes may migrate at once
  statements: [
    `CREATE TABLE IF NOT EXISTS ${TABLE} (
      id bytea PRIMARY KEY,
      purpose text NOT NULL,
      key_id text NOT NULL,
      iv bytea NOT NULL,
      sealed bytea NOT NULL,
      expires_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS ${TABLE}_expires_at ON ${TABLE} (expires_at)`,
  ],
};

export class ClaimCheckStore {
  private readonly keys: Map<string, Buffer>;
  private readonly activeKeyId: string;
  private sweeper: NodeJS.Timeout | undefined;
  /** Handles discarded, not yet deleted (discardSoon), with their record ids. */
  private readonly toDiscard = new Map<string, Buffer>();
  private discardTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    opts: ClaimCheckStoreOptions,
  ) {
    this.keys = new Map(opts.keys.map((k) => [k.id, k.key]));
    this.activeKeyId = opts.activeKeyId ?? opts.keys[0]?.id ?? '';
    if (!this.keys.has(this.activeKeyId)) throw new Error('claim-check: the active key must be one of the keys');
    for (const k of opts.keys) if (k.key.length !== 32) throw new Error(`claim-check: key ${k.id} must be 32 bytes`);
    this.ttlMs = opts.ttlMs;
  }

  readonly ttlMs: number;

  /** Connects and creates the table if needed. */
  static connect(opts: ClaimCheckStoreOptions): Promise<ClaimCheckStore> {
    return connectPostgresStore(opts, SCHEMA, (pool) => new ClaimCheckStore(pool, opts));
  }

  /** Seals `value` (JSON) and answers the handle that opens it, for `ttlMs` (default: the store's TTL). */
  async seal(purpose: SecretPurpose, value: unknown, ttlMs: number = this.ttlMs): Promise<string> {
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new Error('claim-check: ttlMs must be a positive integer');
    const handle = `cc_${randomBytes(16).toString('base64url')}`;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.activeKeyId)!, iv);
    cipher.setAAD(aad(handle, purpose, this.activeKeyId));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final(), cipher.getAuthTag()]);
    await this.pool.query(
      `INSERT INTO ${TABLE} (id, purpose, key_id, iv, sealed, expires_at) VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6::double precision / 1000))`,
      [recordId(handle), purpose, this.activeKeyId, iv, sealed, ttlMs],
    );
    return handle;
  }

  /** The sealed value, while its record lives; SecretUnavailableError otherwise. */
  async open<T>(handle: string, purpose: SecretPurpose): Promise<T> {
    // Anything but a handle's shape is refused before hashing it or asking the database.
    if (!isClaimHandle(handle) || this.toDiscard.has(handle)) throw new SecretUnavailableError(purpose);
    const { rows } = await this.pool.query<{ purpose: string; key_id: string; iv: Buffer; sealed: Buffer }>(
      `SELECT purpose, key_id, iv, sealed FROM ${TABLE} WHERE id = $1 AND expires_at > now()`,
      [recordId(handle)],
    );
    const row = rows[0];
    const key = row && this.keys.get(row.key_id);
    if (!row || !key || row.purpose !== purpose) throw new SecretUnavailableError(purpose);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, row.iv);
      decipher.setAAD(aad(handle, purpose, row.key_id));
      decipher.setAuthTag(row.sealed.subarray(row.sealed.length - 16));
      const plain = Buffer.concat([decipher.update(row.sealed.subarray(0, row.sealed.length - 16)), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as T;
    } catch {
      // Tampered with, or sealed for another handle: as good as absent.
      throw new SecretUnavailableError(purpose);
    }
  }

  /** Deletes the record now (a no-op when it is gone already). */
  async discard(handle: string): Promise<void> {
    if (!isClaimHandle(handle)) return;
    await this.pool.query(`DELETE FROM ${TABLE} WHERE id = $1`, [recordId(handle)]);
  }

  /**
   * Deletes the record soon, with others, in one statement (at most DISCARD_BATCH_MS later, or at
   * once when DISCARD_BATCH_SIZE are waiting): the payment's path pays no round trip for it. From
   * this call on, this process no longer opens the handle; another process could until the batch
   * runs. A batch that fails (or a process that dies first) leaves the records to their TTL.
   */
  discardSoon(handle: string): void {
    if (!isClaimHandle(handle)) return;
    this.toDiscard.set(handle, recordId(handle));
    if (this.toDiscard.size >= DISCARD_BATCH_SIZE) void this.flushDiscards();
    else this.discardTimer ??= setTimeout(() => void this.flushDiscards(), DISCARD_BATCH_MS).unref();
  }

  /** Runs the waiting deletes now (close() does too). */
  async flushDiscards(): Promise<void> {
    if (this.discardTimer) clearTimeout(this.discardTimer);
    this.discardTimer = undefined;
    if (this.toDiscard.size === 0) return;
    const batch = new Map(this.toDiscard);
    this.toDiscard.clear();
    await this.pool
      .query(`DELETE FROM ${TABLE} WHERE id = ANY($1::bytea[])`, [[...batch.values()]])
      .catch(() => undefined); // the TTL (and the sweeper) still end them
  }

  /** Deletes every record past its TTL; answers how many. */
  async sweepExpired(): Promise<number> {
    const res = await this.pool.query(`DELETE FROM ${TABLE} WHERE expires_at <= now()`);
    return res.rowCount ?? 0;
  }

  /** How many records live now (for tests and operators; no contents). */
  async liveCount(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${TABLE} WHERE expires_at > now()`,
    );
    return Number(rows[0].n);
  }

  /** Sweeps expired records every `intervalMs` until close(). */
  startSweeper(intervalMs = 60_000, onError: (err: unknown) => void = () => undefined): void {
    this.sweeper ??= setInterval(() => void this.sweepExpired().catch(onError), intervalMs);
    this.sweeper.unref();
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await this.flushDiscards();
    await this.pool.end();
  }
}

const recordId = (handle: string): Buffer => createHash('sha256').update(handle).digest();
const aad = (handle: string, purpose: string, keyId: string): Buffer =>
  Buffer.from(`${handle}|${purpose}|${keyId}`, 'utf8');
