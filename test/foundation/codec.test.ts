import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../../src/codec/aes-gcm-codec';
import { startCodecServer, type RunningCodecServer } from '../../src/codec/codec-server';

const k1 = { id: 'k1', key: randomBytes(32) };
const k2 = { id: 'k2', key: randomBytes(32) };
const secret = { card: { number: '5555555555554444', cvv: '123' }, amount: 10000 };
const text = (b?: Uint8Array | null) => Buffer.from(b ?? []).toString('utf8');

describe('AES-256-GCM payload codec', () => {
  it('round-trips a payload and leaves no plaintext in the encoded form', async () => {
    const codec = new AesGcmPayloadCodec([k1]);
    const plain = defaultPayloadConverter.toPayload(secret);
    const [encoded] = await codec.encode([plain]);
    expect(text(encoded.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(encoded.metadata?.[KEY_ID_METADATA])).toBe('k1');
    expect(text(encoded.data)).not.toContain('5555555555554444');
    const [decoded] = await codec.decode([encoded]);
    expect(defaultPayloadConverter.fromPayload(decoded)).toEqual(secret);
  });

  it('uses a fresh IV every time', async () => {
    const codec = new AesGcmPayloadCodec([k1]);
    const plain = defaultPayloadConverter.toPayload('same');
    const [a, b] = await codec.encode([plain, plain]);
    expect(Buffer.from(a.data!).equals(Buffer.from(b.data!))).toBe(false);
  });

  it('rotates keys: new payloads use the active key, old ones still decode', async () => {
    const before = new AesGcmPayloadCodec([k1]);
    const [old] = await before.encode([defaultPayloadConverter.toPayload('old')]);
    const after = new AesGcmPayloadCodec([k2, k1], 'k2');
    const [fresh] = await after.encode([defaultPayloadConverter.toPayload('new')]);
    expect(text(fresh.metadata?.[KEY_ID_METADATA])).toBe('k2');
    const [o, n] = await after.decode([old, fresh]);
    expect(defaultPayloadConverter.fromPayload(o)).toBe('old');
    expect(defaultPayloadConverter.fromPayload(n)).toBe('new');
  });

  it('refuses a tampered payload, an unknown key id and a swapped key id', async () => {
    const codec = new AesGcmPayloadCodec([k1, k2]);
    const [enc] = await codec.encode([defaultPayloadConverter.toPayload('x')]);
    const tampered: Payload = { ...enc, data: Buffer.from(enc.data!).map((b, i) => (i === 20 ? b ^ 1 : b)) };
    await expect(codec.decode([tampered])).rejects.toThrow();
    await expect(new AesGcmPayloadCodec([k2]).decode([enc])).rejects.toThrow(/no decryption key with id k1/);
    const swapped: Payload = { ...enc, metadata: { ...enc.metadata, [KEY_ID_METADATA]: Buffer.from('k2') } };
    await expect(codec.decode([swapped])).rejects.toThrow();
  });

  it('passes unencrypted payloads through on decode', async () => {
    const plain = defaultPayloadConverter.toPayload({ a: 1 });
    const [out] = await new AesGcmPayloadCodec([k1]).decode([plain]);
    expect(out).toBe(plain);
  });
});

describe('codec server', () => {
  let server: RunningCodecServer;
  const codec = new AesGcmPayloadCodec([k1]);
  beforeAll(async () => {
    server = await startCodecServer({
      codec,
      token: 'test-token-123',
      corsOrigins: ['http://localhost:8233'],
      port: 0,
    });
  });
  afterAll(() => server.close());

  const toJson = (p: Payload) => ({
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: Buffer.from(p.data ?? []).toString('base64'),
  });

  it('decodes for a caller with the bearer token, with CORS for the Web UI', async () => {
    const [enc] = await codec.encode([defaultPayloadConverter.toPayload(secret)]);
    const res = await fetch(`${server.url}/decode`, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer test-token-123',
        Origin: 'http://localhost:8233',
        'Content-Type': 'application/json',
        'X-Namespace': 'default',
      },
      body: JSON.stringify({ payloads: [toJson(enc)] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const body = (await res.json()) as { payloads: { data: string }[] };
    expect(JSON.parse(Buffer.from(body.payloads[0].data, 'base64').toString())).toEqual(secret);
  });

  it('encodes, and the result decodes back', async () => {
    const res = await fetch(`${server.url}/encode`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer test-token-123' },
      body: JSON.stringify({ payloads: [toJson(defaultPayloadConverter.toPayload('hello'))] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    expect(Buffer.from(body.payloads[0].metadata.encoding, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
    const back = await codec.decode([
      {
        metadata: Object.fromEntries(
          Object.entries(body.payloads[0].metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
        ),
        data: Buffer.from(body.payloads[0].data, 'base64'),
      },
    ]);
    expect(defaultPayloadConverter.fromPayload(back[0])).toBe('hello');
  });

  it('answers the CORS preflight without a token', async () => {
    const res = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:8233', 'Access-Control-Request-Method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')).toContain('Authorization');
  });

  it('refuses a missing or wrong token, and gives no CORS grant to other origins', async () => {
    const body = JSON.stringify({ payloads: [] });
    expect((await fetch(`${server.url}/decode`, { method: 'POST', body })).status).toBe(401);
    expect(
      (
        await fetch(`${server.url}/decode`, {
          method: 'POST',
          body,
          headers: { Authorization: 'Bearer wrong-token-12' },
        })
      ).status,
    ).toBe(401);
    const other = await fetch(`${server.url}/decode`, {
      method: 'POST',
      body,
      headers: { Origin: 'http://evil.example' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('rejects malformed bodies with 400', async () => {
    const res = await fetch(`${server.url}/decode`, {
      method: 'POST',
      body: '{"payloads": 3}',
      headers: { Authorization: 'Bearer test-token-123', 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(400);
  });
});
