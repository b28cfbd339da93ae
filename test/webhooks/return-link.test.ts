// Issue #27 section 6, GET /payments/return: a payment's state only through a signed, expiring link
// (HMAC-SHA256 over reference + expiry, RETURN_LINK_KEY), otherwise a neutral page; rate-limited
// per client address. Real receiver over HTTP, the run's dev server: the payment here is a webhook
// holder started through the receiver itself (no worker polls this file's task queue).
import { createHmac, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Client } from '@temporalio/client';
import { createLogger } from '../../src/logging/logger';
import { closeServer, createWebhookReceiver, listen } from '../../src/webhooks/receiver';
import { createTemporalClient } from '../../src/temporal/client';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { signReturnUrl, verifyReturnLink, withSignedReturn } from '../../src/config/return-links';
import { testConfig } from '../support/stack';
import { chargeSuccessfulBody, listenWebhookReceiver } from '../support/webhook-receiver';

const config = testConfig();
const links = config.returnLinks;
let client: Client;
let server: Server;
let url: string;
const ref = `ret-${randomUUID()}`;
const NEUTRAL = 'Your payment is being confirmed';

beforeAll(async () => {
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  ({ server, url } = await listenWebhookReceiver(config, client));
  // A payment the receiver knows: its webhook starts a holder under payment-<ref>.
  const raw = chargeSuccessfulBody(ref);
  const res = await fetch(`${url}/webhooks`, {
    method: 'POST',
    body: raw,
    headers: {
      'Content-Type': 'application/json',
      'x-service-encrypted-body': createHmac('sha512', config.payments.secretKey).update(raw).digest('hex'),
    },
  });
  expect(res.status).toBe(200);
});

afterAll(async () => {
  await closeServer(server);
  await client.workflow
    .getHandle(paymentWorkflowId(ref))
    .terminate('test cleanup')
    .catch(() => undefined);
  await client.connection.close();
});

const page = async (link: string) => {
  const res = await fetch(link);
  return { status: res.status, text: await res.text(), cache: res.headers.get('cache-control') };
};

describe('GET /payments/return', () => {
  it('shows the state through a signed, unexpired link', async () => {
    const shown = await page(signReturnUrl(`${url}/payments/return`, ref, links));
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(`Payment ${ref}`);
    expect(shown.text).toMatch(/Status: \w+/);
    expect(shown.text).not.toContain(NEUTRAL);
    expect(shown.cache).toBe('no-store');
  });

  it.each([
    ['a bare reference', () => `${url}/payments/return?reference=${ref}`],
    [
      'another reference under a valid signature',
      () => signReturnUrl(`${url}/payments/return`, ref, links).replace(ref, `${ref}x`),
    ],
    [
      'a signature made with another key',
      () => signReturnUrl(`${url}/payments/return`, ref, { key: 'k'.repeat(40), ttlSeconds: 600 }),
    ],
    [
      'an expired link',
      () => signReturnUrl(`${url}/payments/return`, ref, links, Date.now() - (links.ttlSeconds + 5) * 1000),
    ],
    [
      'a later expiry than was signed',
      () => {
        const u = new URL(signReturnUrl(`${url}/payments/return`, ref, links));
        u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600));
        return u.toString();
      },
    ],
  ])('shows a neutral page for %s: no state, no reference', async (_label, link) => {
    const shown = await page(link());
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(NEUTRAL);
    expect(shown.text).not.toContain(ref);
    expect(shown.text).not.toMatch(/Status:/);
  });

  it('is rate-limited per client address (429 with Retry-After)', async () => {
    const limited = createWebhookReceiver({
      client,
      taskQueue: config.temporal.taskQueue,
      secretKey: config.payments.secretKey,
      returnLinks: links,
      returnRateLimit: { limit: 3, windowMs: 60_000 },
      logger: createLogger({ level: 'silent' }),
    });
    const base = await listen(limited, 0);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await fetch(`${base}/payments/return?reference=r${i}`)).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const refused = await fetch(`${base}/payments/return`);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      // The webhooks themselves are not limited by it.
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      await closeServer(limited);
    }
  });
});

describe('the starters sign the return URL they build', () => {
  it("signs a return URL on our route for the input's reference, and leaves the merchant's own URL alone", () => {
    const input = withSignedReturn(
      { returnLinks: links },
      { transactionRef: 'ref-9', callbackUrl: `${url}/payments/return`, redirectUrl: 'https://shop.example/thanks' },
    );
    expect(input.redirectUrl).toBe('https://shop.example/thanks');
    expect(verifyReturnLink(new URL(input.callbackUrl!).searchParams, links.key)).toEqual({ reference: 'ref-9' });
    expect(withSignedReturn({}, { transactionRef: 'x', callbackUrl: `${url}/payments/return` }).callbackUrl).toBe(
      `${url}/payments/return`,
    );
  });
});
