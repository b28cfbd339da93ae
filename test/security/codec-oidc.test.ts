// Issue #42 §3: the codec server behind the Web UI's single sign-on. A local identity provider runs
// inside the test (its discovery document and JWKS served over HTTP, tokens signed with its keys);
// the codec server verifies the user's token (issuer, audience, signature by the JWKS, exp, nbf),
// authorises the namespace the request names from a claim (or a mapping), audits who decoded what
// without payloads, keeps /encode off unless configured, and limits each client's rate.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { startCodecServer, type RunningCodecServer } from '../../src/codec/codec-server';
import { OidcVerifier, type OidcVerifierOptions } from '../../src/codec/oidc';
import { createLogger } from '../../src/logging/logger';
import { loadCodecConfig } from '../../src/config/processes';
import { LogCapture } from '../support/stack';

const AUDIENCE = 'temporal-ui';
const SECRET = { card: 'none here', note: 'decoded-for-the-test' };
const codec = new AesGcmPayloadCodec([{ id: 'k1', key: randomBytes(32) }], 'k1');

/** The identity provider: RSA and EC signing keys, a JWKS it may rotate, and a count of JWKS reads. */
class LocalIdp {
  readonly rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  readonly ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  readonly later = generateKeyPairSync('rsa', { modulusLength: 2048 });
  published: { kid: string; key: KeyObject; alg: string }[] = [
    { kid: 'rsa-1', key: this.rsa.publicKey, alg: 'RS256' },
    { kid: 'ec-1', key: this.ec.publicKey, alg: 'ES256' },
  ];
  jwksReads = 0;
  down = false;
  private server!: Server;
  issuer = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      if (this.down) return void res.writeHead(503).end();
      if (req.url === '/.well-known/openid-configuration') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ issuer: this.issuer, jwks_uri: `${this.issuer}/keys` }));
      }
      if (req.url === '/keys') {
        this.jwksReads += 1;
        const keys = this.published.map((p) => ({
          ...p.key.export({ format: 'jwk' }),
          kid: p.kid,
          alg: p.alg,
          use: 'sig',
        }));
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ keys }));
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  /** A token it signs: RS256 with rsa-1 unless told otherwise; claims over the defaults (an hour of validity). */
  token(claims: Record<string, unknown> = {}, opts: { alg?: 'RS256' | 'ES256'; kid?: string; key?: KeyObject } = {}) {
    const alg = opts.alg ?? 'RS256';
    const now = Math.floor(Date.now() / 1000);
    const header = { alg, typ: 'JWT', kid: opts.kid ?? (alg === 'RS256' ? 'rsa-1' : 'ec-1') };
    const body = { iss: this.issuer, aud: AUDIENCE, sub: 'ada@example.com', iat: now, exp: now + 3600, ...claims };
    const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const signed = `${part(header)}.${part(body)}`;
    const key = opts.key ?? (alg === 'RS256' ? this.rsa.privateKey : this.ec.privateKey);
    const signature = sign('sha256', Buffer.from(signed), alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key);
    return `${signed}.${signature.toString('base64url')}`;
  }
}

const idp = new LocalIdp();
beforeAll(() => idp.start());
afterAll(() => idp.stop());

const logs = new LogCapture();
const servers: RunningCodecServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function codecServer(
  over: Partial<OidcVerifierOptions> = {},
  extra: { encode?: boolean; rateLimitPerMinute?: number } = {},
) {
  const oidc = new OidcVerifier({
    issuer: idp.issuer,
    audiences: [AUDIENCE, 'another-client'],
    jwksUrl: `${idp.issuer}/keys`,
    namespacesClaim: 'permissions',
    namespaceMap: {},
    clockSkewS: 0,
    ...over,
  });
  const server = await startCodecServer({
    codec,
    oidc,
    corsOrigins: [],
    production: true,
    logger: createLogger({ destination: logs }),
    ...extra,
  });
  servers.push(server);
  return server;
}

const encrypted = async () => {
  const [p] = await codec.encode([defaultPayloadConverter.toPayload(SECRET)]);
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
    data: Buffer.from(p.data!).toString('base64'),
  };
};

async function call(server: RunningCodecServer, path: string, token: string | undefined, headers = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-namespace': 'payments',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify({ payloads: [await encrypted()] }),
  });
  const body = (await res.json()) as { error?: string; payloads?: { data: string }[] };
  return { status: res.status, body, retryAfter: res.headers.get('retry-after') };
}
const decoded = (body: { payloads?: { data: string }[] }) =>
  JSON.parse(Buffer.from(body.payloads![0].data, 'base64').toString('utf8')) as unknown;

describe('the user token', () => {
  it('a token that grants the namespace decodes (RS256 and ES256); one for another namespace is refused 403', async () => {
    const server = await codecServer();
    const token = idp.token({ permissions: ['payments:read', 'sandbox:admin'] });
    const ok = await call(server, '/decode', token, { 'x-workflow-id': 'card-R1' });
    expect(ok.status).toBe(200);
    expect(decoded(ok.body)).toEqual(SECRET);
    const ec = await call(server, '/decode', idp.token({ permissions: ['payments:read'] }, { alg: 'ES256' }));
    expect(ec.status).toBe(200);
    const other = await call(server, '/decode', idp.token({ permissions: ['sandbox:read'] }));
    expect(other).toMatchObject({ status: 403, body: { error: 'not allowed to use namespace payments' } });
    expect((await call(server, '/decode', token, { 'x-namespace': 'billing' })).status).toBe(403);
    expect((await call(server, '/decode', idp.token({ permissions: 'payments:nothing' }))).status).toBe(403);
    expect((await call(server, '/decode', idp.token({}))).status).toBe(403); // no claim: no namespace
    const noNamespace = await fetch(`${server.url}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ payloads: [await encrypted()] }),
    });
    expect(noNamespace.status).toBe(403);
  });

  it('an expired token, one not valid yet, another issuer or audience are refused 401', async () => {
    const server = await codecServer();
    const now = Math.floor(Date.now() / 1000);
    const grants = { permissions: ['payments:read'] };
    const refused = async (claims: Record<string, unknown>, reason: string) =>
      expect(await call(server, '/decode', idp.token({ ...grants, ...claims }))).toMatchObject({
        status: 401,
        body: { error: `token refused: ${reason}` },
      });
    await refused({ exp: now - 5 }, 'expired');
    await refused({ nbf: now + 120 }, 'not valid yet (nbf)');
    await refused({ iss: 'https://evil.example' }, 'issuer not accepted');
    await refused({ aud: 'some-other-app' }, 'audience not accepted');
    expect((await call(server, '/decode', idp.token({ ...grants, aud: ['x', 'another-client'] }))).status).toBe(200);
    expect((await call(server, '/decode', undefined)).status).toBe(401);
  });

  it('a bad signature is refused 401: signed by a key the issuer does not publish, altered claims, alg none or HS256', async () => {
    const server = await codecServer();
    const grants = { permissions: ['payments:read'] };
    const forged = idp.token(grants, { key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey });
    expect(await call(server, '/decode', forged)).toMatchObject({
      status: 401,
      body: { error: 'token refused: bad signature' },
    });
    const [h, , s] = idp.token(grants).split('.');
    const widened = Buffer.from(
      JSON.stringify({ iss: idp.issuer, aud: AUDIENCE, sub: 'x', exp: 9e9, permissions: ['billing:read'] }),
    ).toString('base64url');
    expect((await call(server, '/decode', `${h}.${widened}.${s}`, { 'x-namespace': 'billing' })).status).toBe(401);
    for (const alg of ['none', 'HS256']) {
      const header = Buffer.from(JSON.stringify({ alg, kid: 'rsa-1' })).toString('base64url');
      const [, body] = idp.token(grants).split('.');
      expect((await call(server, '/decode', `${header}.${body}.`)).body.error).toMatch(/algorithm not accepted/);
    }
    expect((await call(server, '/decode', 'not-a-jwt')).status).toBe(401);
    expect((await call(server, '/decode', idp.token(grants, { kid: 'unknown-kid' }))).status).toBe(401);
  });

  it('finds the JWKS by discovery, caches it, and reads it again for a key id it does not know (rotation)', async () => {
    const server = await codecServer({ jwksUrl: undefined });
    const grants = { permissions: ['payments:write'] };
    const reads = idp.jwksReads;
    expect((await call(server, '/decode', idp.token(grants))).status).toBe(200);
    expect((await call(server, '/decode', idp.token(grants))).status).toBe(200);
    expect(idp.jwksReads).toBe(reads + 1); // cached
    // The issuer rotates to a new key after the server read its JWKS: the new key id is fetched
    // again only after JWKS_REFETCH_MS (30 s), read on a clock the test moves.
    const clock = { now: Date.now() };
    const rotated = await codecServer({ jwksUrl: undefined, now: () => clock.now });
    expect((await call(rotated, '/decode', idp.token(grants))).status).toBe(200);
    const newer = idp.token(grants, { kid: 'rsa-2', key: idp.later.privateKey });
    idp.published.push({ kid: 'rsa-2', key: idp.later.publicKey, alg: 'RS256' });
    expect((await call(rotated, '/decode', newer)).status).toBe(401); // within 30 s: not fetched again
    clock.now += 31_000;
    expect((await call(rotated, '/decode', newer)).status).toBe(200);
  });

  it('an identity provider that cannot be read (and no keys cached) answers 503, not 401; it is asked again after 30 s, not at every request', async () => {
    idp.down = true;
    const clock = { now: Date.now() };
    const token = idp.token({ permissions: ['payments:read'] });
    try {
      const server = await codecServer({ now: () => clock.now });
      const reads = idp.jwksReads;
      expect(await call(server, '/decode', token)).toMatchObject({
        status: 503,
        body: { error: "the identity provider's keys are unavailable: try again" },
      });
      idp.down = false;
      expect((await call(server, '/decode', token)).status).toBe(503); // not asked again yet
      expect(idp.jwksReads).toBe(reads);
      clock.now += 31_000;
      expect((await call(server, '/decode', token)).status).toBe(200);
    } finally {
      idp.down = false;
    }
  });

  it('a configured mapping grants namespaces from another claim (groups)', async () => {
    const server = await codecServer({
      namespacesClaim: 'groups',
      namespaceMap: { 'payments-ops': ['payments', 'sandbox'], auditors: ['billing'] },
    });
    expect((await call(server, '/decode', idp.token({ groups: ['payments-ops'] }))).status).toBe(200);
    expect((await call(server, '/decode', idp.token({ groups: ['auditors'] }))).status).toBe(403);
    expect((await call(server, '/decode', idp.token({ permissions: ['payments:read'] }))).status).toBe(403);
  });
});

describe('audit, /encode and the rate limit', () => {
  it('audits who decoded what (user, namespace, workflow id, payload count), refusals too, never a payload or a token', async () => {
    const server = await codecServer();
    const token = idp.token({ sub: 'grace@example.com', permissions: ['payments:read'] });
    await call(server, '/decode', token, { 'x-workflow-id': 'card-AUDIT-1' });
    await call(server, '/decode', idp.token({ sub: 'mallory@example.com', permissions: ['x:read'] }), {
      'x-workflow-id': 'card-AUDIT-2',
    });
    const lines = logs.records.filter((r) => String(r.workflowId).startsWith('card-AUDIT'));
    expect(lines).toEqual([
      expect.objectContaining({
        audit: 'codec.decode',
        user: 'grace@example.com',
        namespace: 'payments',
        workflowId: 'card-AUDIT-1',
        payloads: 1,
      }),
      expect.objectContaining({
        audit: 'codec.decode',
        refused: 403,
        namespace: 'payments',
        workflowId: 'card-AUDIT-2',
      }),
    ]);
    expect(logs.rawText).not.toContain(SECRET.note);
    expect(logs.rawText).not.toContain(token.split('.')[2]);
  });

  it('/encode is off in OIDC mode unless configured; configured, it follows the same rules', async () => {
    const token = idp.token({ permissions: ['payments:write'] });
    const off = await codecServer();
    expect(await call(off, '/encode', token)).toMatchObject({
      status: 404,
      body: { error: expect.stringMatching(/CODEC_ENCODE_ENABLED/) },
    });
    const on = await codecServer({}, { encode: true });
    expect((await call(on, '/encode', token)).status).toBe(200);
    expect((await call(on, '/encode', token, { 'x-namespace': 'billing' })).status).toBe(403);
  });

  it('each client (token subject, or address without a valid token) has its own budget: 429 with Retry-After past it', async () => {
    const server = await codecServer({}, { rateLimitPerMinute: 3 });
    const ada = idp.token({ sub: 'ada', permissions: ['payments:read'] });
    for (let i = 0; i < 3; i++) expect((await call(server, '/decode', ada)).status).toBe(200);
    const limited = await call(server, '/decode', ada);
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    expect((await call(server, '/decode', idp.token({ sub: 'bob', permissions: ['payments:read'] }))).status).toBe(200);
    // Guesses without a valid token spend the address's budget.
    for (let i = 0; i < 3; i++) expect((await call(server, '/decode', 'guess')).status).toBe(401);
    expect((await call(server, '/decode', 'guess')).status).toBe(429);
  });
});

describe('configuration (the codec-server process)', () => {
  const base = { CODEC_SERVER_TOKEN: 'a-codec-token-for-tests' };
  it('CODEC_AUTH_MODE=oidc without an issuer or audience fails with one line per variable', () => {
    expect(() => loadCodecConfig({ ...base, CODEC_AUTH_MODE: 'oidc' })).toThrow(
      /CODEC_OIDC_ISSUER: is required when CODEC_AUTH_MODE=oidc\n.*CODEC_OIDC_AUDIENCE: is required/,
    );
    expect(() => loadCodecConfig({ ...base, CODEC_AUTH_MODE: 'jwt' })).toThrow(
      /CODEC_AUTH_MODE: must be token or oidc/,
    );
    expect(() => loadCodecConfig({ ...base, CODEC_OIDC_NAMESPACE_MAP: 'no-equals' })).toThrow(
      /CODEC_OIDC_NAMESPACE_MAP/,
    );
  });

  it('in production, OIDC mode does not ask for the static token it never uses; token mode still refuses the embedded one', () => {
    const production = {
      DEPLOYMENT: 'production',
      CODEC_OIDC_ISSUER: 'https://login.example.com/',
      CODEC_OIDC_AUDIENCE: 'temporal-ui',
    };
    const problems = (env: NodeJS.ProcessEnv): string => {
      try {
        loadCodecConfig(env);
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(problems({ ...production, CODEC_AUTH_MODE: 'token' })).toMatch(/CODEC_SERVER_TOKEN/);
    expect(problems({ ...production, CODEC_AUTH_MODE: 'oidc' })).not.toMatch(/CODEC_SERVER_TOKEN/);
    expect(problems({ ...production, CODEC_AUTH_MODE: 'oidc', CODEC_SERVER_TOKEN: 'short-one' })).not.toMatch(
      /CODEC_SERVER_TOKEN/,
    );
  });

  it('reads the OIDC settings; /encode defaults off except for the static token outside production', () => {
    const oidc = loadCodecConfig({
      ...base,
      CODEC_AUTH_MODE: 'oidc',
      CODEC_OIDC_ISSUER: 'https://login.example.com/',
      CODEC_OIDC_AUDIENCE: 'temporal-ui, temporal-cli',
      CODEC_OIDC_NAMESPACE_MAP: 'ops=payments|sandbox,audit=billing',
    }).codec.auth;
    expect(oidc).toEqual({
      mode: 'oidc',
      oidc: {
        issuer: 'https://login.example.com/',
        audiences: ['temporal-ui', 'temporal-cli'],
        namespacesClaim: 'permissions',
        namespaceMap: { ops: ['payments', 'sandbox'], audit: ['billing'] },
        clockSkewS: 30,
      },
      encodeEnabled: false,
      rateLimitPerMinute: 600,
    });
    expect(loadCodecConfig(base).codec.auth).toMatchObject({ mode: 'token', encodeEnabled: true });
    expect(loadCodecConfig({ ...base, CODEC_ENCODE_ENABLED: 'false' }).codec.auth.encodeEnabled).toBe(false);
  });
});
