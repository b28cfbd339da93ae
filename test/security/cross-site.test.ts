// Deployment defaults that let no one in (issue #11 §3): the sandbox's admin API needs its bearer
// token; no state-changing route of any server we ship can be driven by another site's page — API
// routes take only declared-JSON bodies (a browser posts cross-site only as a form), and the
// sandbox's own HTML form routes refuse cross-site posts; the codec server grants CORS only to the
// configured UI origin.
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Client } from '@temporalio/client';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { startCodecServer, type RunningCodecServer } from '../../src/codec/codec-server';
import { DEFAULT_SANDBOX_KEY, startSandbox, type Sandbox } from '../../src/sandbox';
import { createTemporalClient } from '../../src/temporal/client';
import { closeServer } from '../../src/webhooks/receiver';
import { SANDBOX_ADMIN_HEADERS } from '../support/sandbox-admin';
import { testConfig } from '../support/stack';
import { listenWebhookReceiver } from '../support/webhook-receiver';

const config = testConfig();
const UI_ORIGIN = 'http://localhost:8233';
let sb: Sandbox;
let codec: RunningCodecServer;
let client: Client;
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  codec = await startCodecServer({
    codec: new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId),
    token: 'codec-token-for-test',
    corsOrigins: [UI_ORIGIN],
    port: 0,
  });
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  ({ server: receiver, url: receiverUrl } = await listenWebhookReceiver(config, client, {
    taskQueue: `cross-site-${randomUUID()}`,
  }));
});
afterAll(async () => {
  await closeServer(receiver);
  await client.connection.close();
  await codec.close();
  await sb.close();
});

const apiKey = { authorization: `Bearer ${DEFAULT_SANDBOX_KEY}` };
const checkoutBody = (ref: string) =>
  JSON.stringify({ amount: 10_000, email: 'a@b.co', currency: 'NGN', initiate_type: 'inline', transaction_ref: ref });

describe('sandbox admin API', () => {
  it('needs the bearer token: none or a wrong one is 401, the right one is served', async () => {
    expect((await fetch(`${sb.url}/__admin/clock`)).status).toBe(401);
    expect(
      (await fetch(`${sb.url}/__admin/clock`, { headers: { authorization: 'Bearer wrong-admin-token-000' } })).status,
    ).toBe(401);
    // The merchant's secret key is not the admin token.
    expect((await fetch(`${sb.url}/__admin/ledger`, { headers: apiKey })).status).toBe(401);
    const reset = await fetch(`${sb.url}/__admin/reset`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope-nope-nope-nope' },
    });
    expect(reset.status).toBe(401);
    expect((await fetch(`${sb.url}/__admin/clock`, { headers: SANDBOX_ADMIN_HEADERS })).status).toBe(200);
  });

  it('takes a configured token, and refuses to start with a short one', async () => {
    const own = await startSandbox({ port: 0, adminToken: 'a-configured-admin-token' });
    try {
      expect((await fetch(`${own.url}/__admin/clock`, { headers: SANDBOX_ADMIN_HEADERS })).status).toBe(401);
      expect(
        (await fetch(`${own.url}/__admin/clock`, { headers: { authorization: 'Bearer a-configured-admin-token' } }))
          .status,
      ).toBe(200);
    } finally {
      await own.close();
    }
    await expect(startSandbox({ port: 0, adminToken: 'short' })).rejects.toThrow(/at least 16/);
  });

  it('refuses a non-JSON body even with the token (fault rules cannot be planted by a form)', async () => {
    const res = await fetch(`${sb.url}/__admin/faults`, {
      method: 'POST',
      headers: { authorization: SANDBOX_ADMIN_HEADERS.authorization, 'content-type': 'text/plain' },
      body: JSON.stringify({ path: '/transaction/initiate', kind: 'error5xx' }),
    });
    expect(res.status).toBe(415);
    const faults = (await (await fetch(`${sb.url}/__admin/faults`, { headers: SANDBOX_ADMIN_HEADERS })).json()) as {
      data: unknown[];
    };
    expect(faults.data).toEqual([]);
  });
});

describe('sandbox API routes take declared JSON only', () => {
  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
    'a %s body is 415 and changes nothing',
    async (type) => {
      const ref = `xs-${randomUUID()}`;
      const res = await fetch(`${sb.url}/transaction/initiate`, {
        method: 'POST',
        headers: { ...apiKey, 'content-type': type },
        body: checkoutBody(ref),
      });
      expect(res.status).toBe(415);
      expect(((await res.json()) as { message: string }).message).toBe('Content-Type must be application/json');
      expect(sb.requests().filter((r) => r.reference === ref && r.status === 200)).toEqual([]);
      // The same request declared as JSON is served.
      const json = await fetch(`${sb.url}/transaction/initiate`, {
        method: 'POST',
        headers: { ...apiKey, 'content-type': 'application/json; charset=utf-8' },
        body: checkoutBody(ref),
      });
      expect(json.status).toBe(200);
    },
  );

  it('a body with no content type is 415; a bodyless state change and a GET need none', async () => {
    const res = await fetch(`${sb.url}/transaction/initiate`, {
      method: 'POST',
      headers: apiKey,
      body: new Uint8Array(Buffer.from(checkoutBody(`xs-${randomUUID()}`))),
    });
    expect(res.status).toBe(415);
    expect((await fetch(`${sb.url}/transaction/verify/unknown-ref`, { headers: apiKey })).status).not.toBe(415);
  });
});

describe('sandbox HTML form routes (checkout modal, 3DS) refuse cross-site posts', () => {
  const initiate = async () => {
    const ref = `xs-${randomUUID()}`;
    expect(
      (
        await fetch(`${sb.url}/transaction/initiate`, {
          method: 'POST',
          headers: { ...apiKey, 'content-type': 'application/json' },
          body: checkoutBody(ref),
        })
      ).status,
    ).toBe(200);
    return ref;
  };
  const formPost = (ref: string, headers: Record<string, string>) =>
    fetch(`${sb.url}/checkout/${ref}/card`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({
        number: '5555555555554444',
        cvv: '123',
        expiry_month: '12',
        expiry_year: '29',
      }).toString(),
    });

  it('from another origin: 403, and the checkout did not move', async () => {
    const ref = await initiate();
    expect((await formPost(ref, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await formPost(ref, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect(await (await fetch(`${sb.url}/checkout/${ref}`)).text()).not.toMatch(
      /data-status="(Success|ValidatePin|ValidateOTP)"/,
    );
  });

  it("from the sandbox's own page (same origin) the form is served", async () => {
    const ref = await initiate();
    const res = await formPost(ref, { origin: new URL(sb.url).origin, 'sec-fetch-site': 'same-origin' });
    expect(res.status).not.toBe(403);
    expect(res.status).toBeLessThan(400);
  });
});

describe('webhook receiver', () => {
  it('refuses an HTML form encoding with 415 before reading a signature', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await fetch(`${receiverUrl}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': type, 'x-service-encrypted-body': 'AA' },
        body: '{"Event":"charge_successful"}',
      });
      expect(res.status).toBe(415);
    }
    // E-2 states no content type: an absent or text/plain one reaches the signature check (and fails it).
    const missing = await fetch(`${receiverUrl}/webhooks`, {
      method: 'POST',
      headers: { 'x-service-encrypted-body': 'AA' },
      body: new Uint8Array(Buffer.from('{}')),
    });
    expect(missing.status).toBe(401);
    const text = await fetch(`${receiverUrl}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-service-encrypted-body': 'AA' },
      body: '{}',
    });
    expect(text.status).toBe(401);
    // Declared JSON reaches the signature check (and fails it).
    const json = await fetch(`${receiverUrl}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(401);
  });
});

describe('codec server', () => {
  const payloads = JSON.stringify({ payloads: [] });
  it('refuses a non-JSON body with 415, even with the token', async () => {
    const res = await fetch(`${codec.url}/decode`, {
      method: 'POST',
      headers: { authorization: 'Bearer codec-token-for-test', 'content-type': 'text/plain' },
      body: payloads,
    });
    expect(res.status).toBe(415);
    const ok = await fetch(`${codec.url}/decode`, {
      method: 'POST',
      headers: { authorization: 'Bearer codec-token-for-test', 'content-type': 'application/json' },
      body: payloads,
    });
    expect(ok.status).toBe(200);
  });

  it('answers the CORS preflight for the configured UI origin only', async () => {
    const preflight = (origin: string) =>
      fetch(`${codec.url}/decode`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type,x-namespace',
        },
      });
    const ui = await preflight(UI_ORIGIN);
    expect(ui.status).toBe(204);
    expect(ui.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(ui.headers.get('access-control-allow-methods')).toContain('POST');
    for (const h of ['Authorization', 'Content-Type', 'X-Namespace'])
      expect(ui.headers.get('access-control-allow-headers')).toContain(h);
    expect(ui.headers.get('vary')).toContain('Origin');
    const evil = await preflight('http://evil.example');
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    expect(evil.headers.get('access-control-allow-headers')).toBeNull();
  });
});
