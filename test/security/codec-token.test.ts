// Issue #27 section 6, codec token: header authentication everywhere; a token in the URL path only
// for the development stack's bundled UI, as a capability that is not CODEC_SERVER_TOKEN, and never
// in production (refused even when it is the right token). /encode is off in production unless
// configured (CODEC_ENCODE_ENABLED); the development stack keeps it.
import { randomBytes } from 'node:crypto';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { createCodecServer, startCodecServer, type RunningCodecServer } from '../../src/codec/codec-server';

const TOKEN = randomBytes(24).toString('hex');
const PATH_TOKEN = randomBytes(24).toString('hex');
const codec = new AesGcmPayloadCodec([{ id: 'k1', key: randomBytes(32) }], 'k1');
const body = JSON.stringify({
  payloads: [
    {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from('"x"').toString('base64'),
    },
  ],
});

async function encode(server: RunningCodecServer, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('production codec server', () => {
  let server: RunningCodecServer;
  beforeAll(async () => {
    server = await startCodecServer({ codec, token: TOKEN, corsOrigins: [], production: true });
  });
  afterAll(() => server.close());

  it('refuses the right token in the URL path', async () => {
    const r = await encode(server, `/t/${TOKEN}/decode`);
    expect(r.status).toBe(401);
    expect(String(r.body.error)).toMatch(/URL path is refused/);
  });

  it('accepts the token in the Authorization header', async () => {
    const r = await encode(server, '/decode', { Authorization: `Bearer ${TOKEN}` });
    expect(r.status).toBe(200);
    expect(r.body.payloads).toHaveLength(1);
    expect((await encode(server, '/decode', { Authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
  });

  it('answers /encode only when configured to', async () => {
    const off = await encode(server, '/encode', { Authorization: `Bearer ${TOKEN}` });
    expect(off).toMatchObject({ status: 404, body: { error: expect.stringMatching(/CODEC_ENCODE_ENABLED/) } });
    const on = await startCodecServer({ codec, token: TOKEN, corsOrigins: [], production: true, encode: true });
    try {
      expect((await encode(on, '/encode', { Authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    } finally {
      await on.close();
    }
  });

  it('cannot be given a path token', () => {
    expect(() =>
      createCodecServer({ codec, token: TOKEN, pathToken: PATH_TOKEN, corsOrigins: [], production: true }),
    ).toThrow(/refused in production/);
  });
});

describe('development codec server', () => {
  it('without a path token (compose, the codec-server process): the path form is refused, the header works', async () => {
    const server = await startCodecServer({ codec, token: TOKEN, corsOrigins: [] });
    try {
      expect((await encode(server, `/t/${TOKEN}/encode`)).status).toBe(401);
      expect((await encode(server, '/encode', { Authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("with the stack's path capability: that one opens the path form, CODEC_SERVER_TOKEN in the path does not", async () => {
    const server = await startCodecServer({ codec, token: TOKEN, pathToken: PATH_TOKEN, corsOrigins: [] });
    try {
      expect((await encode(server, `/t/${PATH_TOKEN}/encode`)).status).toBe(200);
      expect((await encode(server, `/t/${TOKEN}/encode`)).status).toBe(401);
      expect((await encode(server, `/t/${PATH_TOKEN.slice(1)}/encode`)).status).toBe(401);
    } finally {
      await server.close();
    }
  });
});

describe('the rate limit with the static token', () => {
  it('counts by address (everyone behind the token shares it): 429 with Retry-After past the budget', async () => {
    const server = await startCodecServer({ codec, token: TOKEN, corsOrigins: [], rateLimitPerMinute: 2 });
    try {
      const auth = { Authorization: `Bearer ${TOKEN}` };
      expect((await encode(server, '/decode', auth)).status).toBe(200);
      expect((await encode(server, '/decode', { Authorization: 'Bearer wrong-token' })).status).toBe(401);
      const res = await fetch(`${server.url}/decode`, {
        method: 'POST',
        body,
        headers: { 'Content-Type': 'application/json', ...auth },
      });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});
