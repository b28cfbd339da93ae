// A claim-check handle and the record key it derives. Version 2 (what seal() makes): `cc_` and 64
// base64url characters, 48 random bytes; the first 16 name the record, the last 32 are a secret that
// exists only in the handle (in Temporal history, encrypted by the payload codec). The record's key
// is HKDF-SHA256(claim-check key, salt = that secret, info = the record id): the claim-check key
// alone, with every row of the table, opens nothing. Version 1 (22 characters, 16 random bytes, the
// record sealed under the claim-check key itself) is only read, until its records expire.
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { isClaimHandle } from '../shared/claim-check';

export type RecordVersion = 1 | 2;

export interface ParsedHandle {
  version: RecordVersion;
  /** The row's primary key: SHA-256 of the part that names the record (never the secret). */
  recordId: Buffer;
  /** Version 2: the 32 bytes that derive the record's key; absent in version 1. */
  secret?: Buffer;
}

const NAME_BYTES = 16;
const SECRET_BYTES = 32;
const HKDF_INFO_PREFIX = 'payflow claim-check record v2 ';

/** A new version-2 handle. */
export const newHandle = (): string => `cc_${randomBytes(NAME_BYTES + SECRET_BYTES).toString('base64url')}`;

/** The handle's parts; undefined for anything that is not a handle (refused before any database query). */
export function parseHandle(handle: unknown): ParsedHandle | undefined {
  if (!isClaimHandle(handle)) return undefined;
  const body = handle.slice('cc_'.length);
  if (body.length === 22) return { version: 1, recordId: sha256(handle) };
  const bytes = Buffer.from(body, 'base64url');
  return {
    version: 2,
    recordId: sha256(bytes.subarray(0, NAME_BYTES)),
    secret: bytes.subarray(NAME_BYTES),
  };
}

/** The AES-256 key of one record: the claim-check key itself in version 1, derived per record in version 2. */
export function recordKey(masterKey: Buffer, parsed: ParsedHandle): Buffer {
  if (parsed.version === 1) return masterKey;
  const info = Buffer.concat([Buffer.from(HKDF_INFO_PREFIX, 'utf8'), parsed.recordId]);
  return Buffer.from(hkdfSync('sha256', masterKey, parsed.secret!, info, 32));
}

/** What the ciphertext is bound to: a record cannot be moved under another id, purpose or key. */
export function recordAad(handle: string, parsed: ParsedHandle, purpose: string, keyId: string): Buffer {
  // Version 1 bound the handle itself (as it was sealed); version 2 binds the record id, never the secret.
  const name = parsed.version === 1 ? handle : `v2|${parsed.recordId.toString('hex')}`;
  return Buffer.from(`${name}|${purpose}|${keyId}`, 'utf8');
}

const sha256 = (data: string | Buffer): Buffer => createHash('sha256').update(data).digest();
