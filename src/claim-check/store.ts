// The claim-check store: secrets sealed with AES-256-GCM into PostgreSQL for a short time, so
// that Temporal history (and the Web UI, and the codec server) never holds them, encrypted or not.
//
//  - seal(): a handle of 48 random bytes (src/claim-check/handle.ts): 16 name the record (its row
//    is keyed by SHA-256 of them, so a dump of the table cannot be joined to workflows), 32 are a
//    secret that is never stored. The record's key is derived with HKDF from the active claim-check
//    key (separate from the payload codec's keys) and that secret: the master key and a dump, WAL
//    archive or backup of the table open nothing without the handle, and deleting either the handle
//    or the row shreds the record. The key id is stored for rotation; the record id, purpose and key
//    id are bound as additional authenticated data.
//  - open(): the plaintext while the record lives; SecretUnavailableError when it was redeemed,
//    expired (TTL, default 15 minutes; card records at most CLAIM_CHECK_CARD_TTL_MS) or never existed.
//  - reseal(): replaces a live record's value (a card kept after an unknown outcome loses its CVV).
//  - discardSoon(): the activity calls it once the service has answered the call that used it;
//    the deletes are batched (one statement for many records, off the payment's path), and this
//    process stops opening the handle at once. A batch that fails is logged, counted
//    (payflow_claim_check_discard_failures) and retried. discard() deletes at once. sweepExpired()
//    deletes what outlived its TTL (a sweeper runs it periodically).
//  - Records of version 1 (before per-record keys: sealed under the claim-check key itself, with a
//    22-character handle) still open until their TTL ends them; nothing seals them any more.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import { connectPostgresStore } from './postgres';
import { newHandle, parseHandle, recordAad, recordKey, type ParsedHandle } from './handle';
import { countDiscardFailure } from './metrics';
import { createLogger } from '../logging/logger';
import type { SecretPurpose } from '../shared/claim-check';

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
  /** The longest a card record (PAN, CVV, expiry; a POS card read) lives, whatever ttlMs says (default 10 minutes). */
  cardTtlMs?: number;
  /** Connections in the pool (default 4). */
  poolSize?: number;
  /** Where failed deletes are reported (default: a logger of its own). */
  logger?: Pick<Logger, 'warn' | 'error'>;
  /** The first retry of a failed batch delete waits this long, each next one twice as long (default 1 s). */
  discardRetryMs?: number;
}

/** The handle does not open: redeemed, expired, unknown, sealed for another purpose, or under a key we no longer hold. */
export class SecretUnavailableError extends Error {
  constructor(readonly purpose: SecretPurpose) {
    super(`the sealed ${purpose} is no longer available (already used, expired or unknown): submit it again`);
    this.name = 'SecretUnavailableError';
  }
}

/** Purposes whose records hold card data: their lifetime is capped by cardTtlMs. */
const CARD_PURPOSES: ReadonlySet<SecretPurpose> = new Set(['card', 'pos-card']);
export const DEFAULT_CARD_TTL_MS = 10 * 60_000;

const TABLE = 'claim_check_records';

// The statements every payment runs, named: PostgreSQL parses and plans each once per connection
// instead of once per call (the card's three secrets are a seal, an open and a batched delete each).
const STATEMENTS = {
  seal: {
    name: 'claim-check-seal',
    text: `INSERT INTO ${TABLE} (id, purpose, key_id, version, iv, sealed, expires_at) VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7::double precision / 1000))`,
  },
  open: {
    name: 'claim-check-open',
    text: `SELECT purpose, key_id, version, iv, sealed FROM ${TABLE} WHERE id = $1 AND expires_at > now()`,
  },
  reseal: {
    name: 'claim-check-reseal',
    text: `UPDATE ${TABLE} SET key_id = $2, iv = $3, sealed = $4 WHERE id = $1 AND purpose = $5 AND version = $6 AND expires_at > now()`,
  },
  discard: { name: 'claim-check-discard', text: `DELETE FROM ${TABLE} WHERE id = $1` },
  discardBatch: { name: 'claim-check-discard-batch', text: `DELETE FROM ${TABLE} WHERE id = ANY($1::bytea[])` },
} as const;
/** How long a discarded record may wait for its batch delete, and how many make a batch at once. */
const DISCARD_BATCH_MS = 1_000;
const DISCARD_BATCH_SIZE = 200;
/** A record's delete is tried this many times in all (retries back off from discardRetryMs, doubling); then the TTL ends it. */
const DISCARD_ATTEMPTS = 5;
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
    // 1: sealed under the claim-check key itself; 2: under a key derived per record (src/claim-check/handle.ts).
    `ALTER TABLE ${TABLE} ADD COLUMN IF NOT EXISTS version smallint NOT NULL DEFAULT 1`,
  ],
};

interface SealedRow {
  purpose: string;
  key_id: string;
  version: number;
  iv: Buffer;
  sealed: Buffer;
}

/** A discarded record waiting for its delete: its id, and how many deletes of it failed. */
interface PendingDiscard {
  id: Buffer;
  failures: number;
}

export class ClaimCheckStore {
  private readonly keys: Map<string, Buffer>;
  private readonly activeKeyId: string;
  private readonly cardTtlMs: number;
  private readonly logger: Pick<Logger, 'warn' | 'error'>;
  private readonly discardRetryMs: number;
  private sweeper: NodeJS.Timeout | undefined;
  /** Handles discarded, not yet deleted (discardSoon): this process no longer opens them. */
  private readonly toDiscard = new Map<string, PendingDiscard>();
  private discardTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    opts: ClaimCheckStoreOptions,
  ) {
    this.keys = new Map(opts.keys.map((k) => [k.id, k.key]));
    this.activeKeyId = opts.activeKeyId ?? opts.keys[0]?.id ?? '';
    if (!this.keys.has(this.activeKeyId)) throw new Error('claim-check: the active key must be one of the keys');
    for (const k of opts.keys) if (k.key.length !== 32) throw new Error(`claim-check: key ${k.id} must be 32 bytes`);
    this.ttlMs = opts.ttlMs;
    this.cardTtlMs = opts.cardTtlMs ?? DEFAULT_CARD_TTL_MS;
    this.logger = opts.logger ?? createLogger({ name: 'claim-check' });
    this.discardRetryMs = opts.discardRetryMs ?? 1_000;
  }

  readonly ttlMs: number;

  /** Connects and creates the table if needed. */
  static connect(opts: ClaimCheckStoreOptions): Promise<ClaimCheckStore> {
    return connectPostgresStore(opts, SCHEMA, (pool) => new ClaimCheckStore(pool, opts));
  }

  /** Seals `value` (JSON) and answers the handle that opens it, for `ttlMs` (default: the store's TTL; card data at most cardTtlMs). */
  async seal(purpose: SecretPurpose, value: unknown, ttlMs: number = this.ttlMs): Promise<string> {
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new Error('claim-check: ttlMs must be a positive integer');
    const lifetimeMs = CARD_PURPOSES.has(purpose) ? Math.min(ttlMs, this.cardTtlMs) : ttlMs;
    const handle = newHandle();
    const parsed = parseHandle(handle)!;
    const { iv, sealed } = this.encrypt(handle, parsed, purpose, value);
    await this.pool.query({
      ...STATEMENTS.seal,
      values: [parsed.recordId, purpose, this.activeKeyId, parsed.version, iv, sealed, lifetimeMs],
    });
    return handle;
  }

  /** The sealed value, while its record lives; SecretUnavailableError otherwise. */
  async open<T>(handle: string, purpose: SecretPurpose): Promise<T> {
    // Anything but a handle's shape is refused before asking the database.
    const parsed = parseHandle(handle);
    if (!parsed || this.toDiscard.has(handle)) throw new SecretUnavailableError(purpose);
    const { rows } = await this.pool.query<SealedRow>({ ...STATEMENTS.open, values: [parsed.recordId] });
    const row = rows[0];
    const master = row && this.keys.get(row.key_id);
    if (!row || !master || row.purpose !== purpose || row.version !== parsed.version)
      throw new SecretUnavailableError(purpose);
    try {
      const decipher = createDecipheriv('aes-256-gcm', recordKey(master, parsed), row.iv);
      decipher.setAAD(recordAad(handle, parsed, purpose, row.key_id));
      decipher.setAuthTag(row.sealed.subarray(row.sealed.length - 16));
      const plain = Buffer.concat([decipher.update(row.sealed.subarray(0, row.sealed.length - 16)), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as T;
    } catch {
      // Tampered with, or sealed for another handle: as good as absent.
      throw new SecretUnavailableError(purpose);
    }
  }

  /**
   * Replaces the value of a live record (same handle, same expiry, a fresh IV under the active key),
   * e.g. a card kept after an unknown outcome, sealed again without its CVV. Answers false when no
   * live record of that purpose was there to replace.
   */
  async reseal(handle: string, purpose: SecretPurpose, value: unknown): Promise<boolean> {
    const parsed = parseHandle(handle);
    if (!parsed || this.toDiscard.has(handle)) return false;
    const { iv, sealed } = this.encrypt(handle, parsed, purpose, value);
    const res = await this.pool.query({
      ...STATEMENTS.reseal,
      values: [parsed.recordId, this.activeKeyId, iv, sealed, purpose, parsed.version],
    });
    return (res.rowCount ?? 0) > 0;
  }

  /** Deletes the record now (a no-op when it is gone already). */
  async discard(handle: string): Promise<void> {
    const parsed = parseHandle(handle);
    if (!parsed) return;
    await this.pool.query({ ...STATEMENTS.discard, values: [parsed.recordId] });
  }

  /**
   * Deletes the record soon, with others, in one statement (at most DISCARD_BATCH_MS later, or at
   * once when DISCARD_BATCH_SIZE are waiting): the payment's path pays no round trip for it. From
   * this call on, this process no longer opens the handle; another process could until the batch
   * runs. A batch that fails is logged, counted and tried again (DISCARD_ATTEMPTS in all, discardRetryMs apart, doubling); a process
   * that dies first leaves the records to their TTL.
   */
  discardSoon(handle: string): void {
    const parsed = parseHandle(handle);
    if (!parsed) return;
    this.toDiscard.set(handle, { id: parsed.recordId, failures: this.toDiscard.get(handle)?.failures ?? 0 });
    if (this.toDiscard.size >= DISCARD_BATCH_SIZE) void this.flushDiscards();
    else this.scheduleFlush(DISCARD_BATCH_MS);
  }

  /** Runs the waiting deletes now (close() does too). A failure is reported and retried, never thrown. */
  async flushDiscards(): Promise<void> {
    if (this.discardTimer) clearTimeout(this.discardTimer);
    this.discardTimer = undefined;
    if (this.toDiscard.size === 0) return;
    const batch = new Map(this.toDiscard);
    this.toDiscard.clear();
    try {
      await this.pool.query({ ...STATEMENTS.discardBatch, values: [[...batch.values()].map((p) => p.id)] });
    } catch (err) {
      this.discardFailed(batch, err);
    }
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
    this.closed = true;
    await this.flushDiscards();
    if (this.discardTimer) clearTimeout(this.discardTimer);
    await this.pool.end();
  }

  private encrypt(handle: string, parsed: ParsedHandle, purpose: SecretPurpose, value: unknown) {
    const iv = randomBytes(12); // random 96-bit IV: in version 2 a key seals one record (twice when resealed)
    const cipher = createCipheriv('aes-256-gcm', recordKey(this.keys.get(this.activeKeyId)!, parsed), iv);
    cipher.setAAD(recordAad(handle, parsed, purpose, this.activeKeyId));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { iv, sealed };
  }

  private scheduleFlush(ms: number): void {
    this.discardTimer ??= setTimeout(() => void this.flushDiscards(), ms).unref();
  }

  /**
   * A batch delete failed: never swallowed. Logged (counts only, no handle) and counted; the records
   * go back in the queue, still refused by this process, and are tried again with a doubling backoff.
   * After DISCARD_ATTEMPTS, or when the store is closing, their TTL (minutes for card data) ends them.
   */
  private discardFailed(batch: Map<string, PendingDiscard>, err: unknown): void {
    let retrying = 0;
    let failures = 0;
    for (const [handle, pending] of batch) {
      const next = { id: pending.id, failures: pending.failures + 1 };
      failures = Math.max(failures, next.failures);
      if (this.closed || next.failures >= DISCARD_ATTEMPTS) continue;
      if (!this.toDiscard.has(handle)) this.toDiscard.set(handle, next);
      retrying += 1;
    }
    const givenUp = batch.size - retrying;
    if (retrying > 0) {
      countDiscardFailure('retrying', retrying);
      this.logger.warn(
        { err, records: retrying, attempt: failures },
        'claim-check: deleting used records failed; retrying (they stay refused by this process)',
      );
      this.scheduleFlush(this.discardRetryMs * 2 ** (failures - 1));
    }
    if (givenUp > 0) {
      countDiscardFailure('gave_up', givenUp);
      this.logger.error(
        { err, records: givenUp, attempts: failures },
        'claim-check: deleting used records failed for good; their TTL deletes them',
      );
    }
  }
}
