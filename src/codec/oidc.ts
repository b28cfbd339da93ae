// The user's OIDC token, as the Web UI forwards it to the codec server (Authorization: Bearer, with
// TEMPORAL_CODEC_PASS_ACCESS_TOKEN=true): verified here with node:crypto only (RS256, ES256) against
// the issuer's JWKS (fetched, cached, fetched again for an unknown key id at most every
// JWKS_REFETCH_MS), then read for the namespaces it grants (Temporal's `permissions` form,
// `<namespace>:<role>`, a bare namespace, or a configured mapping of claim values to namespaces).
import { createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import type { OidcSettings } from '../config/codec-auth';

/** The token does not authenticate: 401. The reason names the rule, never the token's content. */
export class TokenRejectedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'TokenRejectedError';
  }
}

/** The issuer's keys could not be read (and none are cached): 503, the user's token is not at fault. */
export class KeysUnavailableError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'KeysUnavailableError';
  }
}

export interface VerifiedUser {
  /** `sub` (who decoded, for the audit line and the rate limit). */
  subject: string;
  /** Namespaces this token may decode. */
  namespaces: ReadonlySet<string>;
}

export interface OidcVerifierOptions extends OidcSettings {
  /** How long fetched keys are used before they are fetched again (default 10 minutes). */
  keysTtlMs?: number;
  now?: () => number;
}

const ALGORITHMS = {
  RS256: { kty: 'RSA', dsaEncoding: undefined },
  ES256: { kty: 'EC', dsaEncoding: 'ieee-p1363' },
} as const;
type Algorithm = keyof typeof ALGORITHMS;
/** An unknown key id fetches the JWKS again (the issuer rotated), at most this often. */
const JWKS_REFETCH_MS = 30_000;
const FETCH_TIMEOUT_MS = 5_000;
/** Roles of Temporal's `permissions` claim; each lets its holder see the namespace's payloads. */
const ROLES = new Set(['read', 'write', 'worker', 'admin']);

const jwksSchema = z.object({
  keys: z.array(z.looseObject({ kty: z.string(), kid: z.string().optional(), alg: z.string().optional() })),
});
const headerSchema = z.object({ alg: z.string(), kid: z.string().optional() });
const claimsSchema = z.looseObject({
  iss: z.string(),
  sub: z.string().min(1),
  aud: z.union([z.string(), z.array(z.string())]),
  exp: z.number(),
  nbf: z.number().optional(),
});

interface CachedKey {
  kid?: string;
  kty: string;
  alg?: string;
  key: KeyObject;
}

export class OidcVerifier {
  private keys: CachedKey[] = [];
  private fetchedAt = 0;
  /** When the JWKS was last asked for (read or not): an issuer that is down is asked at most every JWKS_REFETCH_MS. */
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private lastFailure = '';
  private fetching: Promise<void> | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: OidcVerifierOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The user behind `token`, or TokenRejectedError (401) / KeysUnavailableError (503). */
  async verify(token: string): Promise<VerifiedUser> {
    const parts = token.split('.');
    if (parts.length !== 3) throw new TokenRejectedError('not a signed JWT');
    const header = decodePart(parts[0], headerSchema, 'header');
    if (!(header.alg in ALGORITHMS)) throw new TokenRejectedError('signature algorithm not accepted (RS256, ES256)');
    const alg = header.alg as Algorithm;
    const key = await this.keyFor(header.kid, alg);
    const signed = Buffer.from(`${parts[0]}.${parts[1]}`, 'utf8');
    const signature = Buffer.from(parts[2], 'base64url');
    const { dsaEncoding } = ALGORITHMS[alg];
    if (!verify('sha256', signed, dsaEncoding ? { key, dsaEncoding } : key, signature))
      throw new TokenRejectedError('bad signature');
    const claims = decodePart(parts[1], claimsSchema, 'claims');
    this.checkClaims(claims);
    return { subject: claims.sub, namespaces: this.namespacesOf(claims) };
  }

  private checkClaims(claims: z.infer<typeof claimsSchema>): void {
    const nowS = this.now() / 1000;
    const skew = this.opts.clockSkewS;
    if (claims.iss !== this.opts.issuer) throw new TokenRejectedError('issuer not accepted');
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.some((a) => this.opts.audiences.includes(a))) throw new TokenRejectedError('audience not accepted');
    if (claims.exp + skew <= nowS) throw new TokenRejectedError('expired');
    if (claims.nbf !== undefined && claims.nbf - skew > nowS) throw new TokenRejectedError('not valid yet (nbf)');
  }

  /** The namespaces the configured claim grants: `<ns>:<role>`, a bare `<ns>`, or a mapped value. */
  private namespacesOf(claims: Record<string, unknown>): Set<string> {
    const raw = claims[this.opts.namespacesClaim];
    const values = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(/\s+/) : [];
    const namespaces = new Set<string>();
    for (const value of values) {
      if (typeof value !== 'string' || value === '') continue;
      for (const ns of this.opts.namespaceMap[value] ?? []) namespaces.add(ns);
      const colon = value.lastIndexOf(':');
      if (colon < 0) namespaces.add(value);
      else if (ROLES.has(value.slice(colon + 1))) namespaces.add(value.slice(0, colon));
    }
    return namespaces;
  }

  private async keyFor(kid: string | undefined, alg: Algorithm): Promise<KeyObject> {
    const find = () =>
      this.keys.find(
        (k) => k.kty === ALGORITHMS[alg].kty && (k.alg === undefined || k.alg === alg) && (!kid || k.kid === kid),
      );
    const now = this.now();
    const stale = now - this.fetchedAt > (this.opts.keysTtlMs ?? 600_000);
    if ((stale || !find()) && now - this.attemptedAt > JWKS_REFETCH_MS) await this.refresh();
    if (this.keys.length === 0)
      throw new KeysUnavailableError(`the issuer's keys could not be read: ${this.lastFailure}`);
    const key = find();
    if (!key) throw new TokenRejectedError('signed with a key the issuer does not publish');
    return key.key;
  }

  /** One fetch at a time; a failed fetch keeps the keys already held (and is tried again after JWKS_REFETCH_MS). */
  private refresh(): Promise<void> {
    this.attemptedAt = this.now();
    this.fetching ??= this.fetchKeys()
      .then(
        (keys) => {
          this.keys = keys;
          this.fetchedAt = this.now();
        },
        (err: unknown) => {
          this.lastFailure = err instanceof Error ? err.message : String(err);
        },
      )
      .finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async fetchKeys(): Promise<CachedKey[]> {
    const url = this.opts.jwksUrl ?? (await this.discoverJwksUrl());
    const jwks = jwksSchema.parse(await getJson(url));
    const keys: CachedKey[] = [];
    for (const jwk of jwks.keys) {
      if (jwk.kty !== 'RSA' && !(jwk.kty === 'EC' && jwk.crv === 'P-256')) continue;
      if (jwk.use !== undefined && jwk.use !== 'sig') continue;
      try {
        keys.push({
          kid: jwk.kid,
          kty: jwk.kty,
          alg: jwk.alg,
          key: createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }),
        });
      } catch {
        // a malformed key is skipped; the others still verify
      }
    }
    return keys;
  }

  private async discoverJwksUrl(): Promise<string> {
    const doc = z
      .object({ jwks_uri: z.url() })
      .parse(await getJson(`${this.opts.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`));
    return doc.jwks_uri;
  }
}

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.json();
}

function decodePart<T>(part: string, schema: z.ZodType<T>, what: string): T {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new TokenRejectedError(`malformed JWT ${what}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new TokenRejectedError(`JWT ${what} lacks ${parsed.error.issues[0]?.path.join('.') || 'a field'}`);
  return parsed.data;
}
