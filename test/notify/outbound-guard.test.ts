// Outgoing events cannot be aimed inside the network (issue #42 §1, docs/security.md "Outgoing
// events"): every address a target resolves to is checked, the connection goes to the checked
// address only, a refused target is never sent to and ends its delivery at once with the reason,
// redirects are not followed, and a merchant's answer body is read up to 64 KiB at most.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMerchantEventDeliveryActivities } from '../../src/activities/merchant-event-delivery';
import type { ActivityDeps } from '../../src/activities/deps';
import { deliverOnce } from '../../src/notify/deliver';
import {
  addressRefusal,
  checkTarget,
  outboundPolicyOf,
  RefusedTarget,
  urlRefusal,
  type OutboundPolicy,
} from '../../src/notify/target-guard';
import { newNotifySecret, type MerchantEvent } from '../../src/notify';
import { httpCreditHandler, CreditHandlerRefused } from '../../src/virtual-accounts/credit-handler';
import { merchantEventId, merchantEventTargetSchema } from '../../src/shared/merchant-event';
import { parseStarterInput } from '../../src/shared/input-error';
import { z } from 'zod';
import { quietLogger } from '../support/stack';

const secret = newNotifySecret();
const PRODUCTION: OutboundPolicy = { httpsOnly: true, allowPrivate: false };
const DEV: OutboundPolicy = { httpsOnly: false, allowPrivate: true };
const STRICT_DEV: OutboundPolicy = { httpsOnly: false, allowPrivate: false };

function event(): MerchantEvent {
  const at = new Date().toISOString();
  return {
    type: 'payment.succeeded',
    id: merchantEventId(`payment-ord-${Date.now()}`, 'payment.succeeded'),
    created_at: at,
    data: { version: 1, flow: 'card', reference: 'ord-1', status: 'success', sequence: 1, occurred_at: at },
  };
}

/** A local endpoint: `answer` writes each response; every request is counted. */
async function endpoint(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ port: number; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url} host=${req.headers.host}`);
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('the addresses an event is never sent to', () => {
  it.each([
    ['169.254.169.254', /link-local/],
    ['0.0.0.0', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['fe80::1', /link-local/],
    ['ff02::1', /multicast/],
    ['::', /unspecified/],
    ['::ffff:169.254.169.254', /169\.254\.169\.254 is a link-local/],
  ])('%s, whatever the policy', (address, why) => {
    expect(addressRefusal(address, DEV)).toMatch(why);
    expect(addressRefusal(address, PRODUCTION)).toMatch(why);
  });

  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.5',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.1.2.3',
    '64:ff9b::a00:1',
    '2002:a00:1::1',
  ])('%s (loopback, private, unique-local, or one of them inside IPv6) unless private addresses are allowed', (a) => {
    expect(addressRefusal(a, PRODUCTION)).toMatch(/loopback or private/);
    expect(addressRefusal(a, DEV)).toBeUndefined();
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    'a public address (%s) is a target',
    (a) => expect(addressRefusal(a, PRODUCTION)).toBeUndefined(),
  );
});

describe('the URL rules', () => {
  it('https only in production, no credentials, and NOTIFY_ALLOWED_HOSTS when set', () => {
    expect(urlRefusal('http://hooks.example.com/e', PRODUCTION)).toMatch(/https/);
    expect(urlRefusal('https://hooks.example.com/e', PRODUCTION)).toBeUndefined();
    expect(urlRefusal('http://hooks.example.com/e', DEV)).toBeUndefined();
    expect(urlRefusal('https://u:p@hooks.example.com/e', PRODUCTION)).toMatch(/credentials/);
    expect(urlRefusal('ftp://hooks.example.com/e', DEV)).toMatch(/not http/);
    const listed = { ...PRODUCTION, allowedHosts: ['hooks.example.com'] };
    expect(urlRefusal('https://HOOKS.example.com./e', listed)).toBeUndefined();
    expect(urlRefusal('https://other.example.com/e', listed)).toMatch(/not in NOTIFY_ALLOWED_HOSTS/);
  });

  it('production refuses private addresses unless NOTIFY_ALLOW_PRIVATE; development allows them unless it says false', () => {
    expect(outboundPolicyOf({ production: true, notify: {} })).toEqual({ httpsOnly: true, allowPrivate: false });
    expect(outboundPolicyOf({ production: true, notify: { allowPrivate: true } }).allowPrivate).toBe(true);
    expect(outboundPolicyOf({ production: false, notify: {} })).toEqual({ httpsOnly: false, allowPrivate: true });
    expect(outboundPolicyOf({ production: false, notify: { allowPrivate: false } }).allowPrivate).toBe(false);
  });

  it('refuses a name when any address it resolves to is refused (the answer order is not ours)', async () => {
    const resolve = () =>
      Promise.resolve([
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ]);
    await expect(checkTarget('https://hooks.example.com/e', PRODUCTION, resolve)).rejects.toThrow(
      /refused target: hooks\.example\.com: 10\.0\.0\.7 is a loopback or private address/,
    );
    await expect(checkTarget('https://[::ffff:169.254.169.254]/e', DEV)).rejects.toBeInstanceOf(RefusedTarget);
  });
});

describe('one attempt', () => {
  it('connects to the checked address only: a name the system cannot resolve is reached through the check', async () => {
    const merchant = await endpoint((_req, res) => res.writeHead(204).end());
    try {
      let lookups = 0;
      const resolve = () => {
        lookups += 1;
        return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
      };
      const url = `http://merchant.invalid:${merchant.port}/events`;
      const attempt = await deliverOnce(url, secret, event(), 5_000, { policy: DEV, resolve });
      expect(attempt).toEqual({ outcome: 'delivered', httpStatus: 204 });
      expect(lookups).toBe(1);
      // The Host header is the URL's, the connection the checked address's.
      expect(merchant.hits).toEqual([`POST /events host=merchant.invalid:${merchant.port}`]);
    } finally {
      await merchant.close();
    }
  });

  it('sends nothing to a refused target and says why', async () => {
    const merchant = await endpoint((_req, res) => res.writeHead(200).end());
    try {
      const attempt = await deliverOnce(`http://127.0.0.1:${merchant.port}/e`, secret, event(), 5_000, {
        policy: STRICT_DEV,
      });
      expect(attempt).toEqual({
        outcome: 'refused',
        error: expect.stringMatching(/^refused target: 127\.0\.0\.1: .*loopback or private/),
      });
      expect(merchant.hits).toHaveLength(0);
    } finally {
      await merchant.close();
    }
  });

  it('does not follow a redirect (not even to a public-looking place): the 302 is retried later', async () => {
    const inside = await endpoint((_req, res) => res.writeHead(200).end());
    const merchant = await endpoint((_req, res) =>
      res.writeHead(302, { location: `http://127.0.0.1:${inside.port}/latest/meta-data` }).end(),
    );
    try {
      const attempt = await deliverOnce(`http://127.0.0.1:${merchant.port}/e`, secret, event(), 5_000, { policy: DEV });
      expect(attempt).toEqual({ outcome: 'retry', httpStatus: 302, error: 'HTTP 302' });
      expect(merchant.hits).toHaveLength(1);
      expect(inside.hits).toHaveLength(0);
    } finally {
      await Promise.all([inside.close(), merchant.close()]);
    }
  });

  it('reads at most 64 KiB of an answer that never ends', async () => {
    const merchant = await endpoint((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    try {
      const started = Date.now();
      const attempt = await deliverOnce(`http://127.0.0.1:${merchant.port}/e`, secret, event(), 5_000, {
        policy: DEV,
      });
      expect(attempt).toEqual({ outcome: 'delivered', httpStatus: 200 });
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      await merchant.close();
    }
  });
});

describe('the delivery activity', () => {
  const activities = (notify: object, production = false) =>
    createMerchantEventDeliveryActivities({
      logger: quietLogger(),
      config: { production, notify: { retryForMs: 60_000, secret, ...notify }, temporal: { taskQueue: 'unused' } },
    } as unknown as ActivityDeps);

  it("ends a refused target's delivery at once (misconfigured: the workflow does not retry it) with the reason", async () => {
    const metadata = await activities({}, true).deliverMerchantEvent({
      event: event(),
      url: 'http://169.254.169.254/latest/meta-data',
    });
    expect(metadata).toEqual({ outcome: 'misconfigured', error: expect.stringMatching(/https:\/\/ in production/) });
    const loopback = await activities({ allowPrivate: false }).deliverMerchantEvent({
      event: event(),
      url: 'http://127.0.0.1:9/e',
    });
    expect(loopback).toEqual({ outcome: 'misconfigured', error: expect.stringMatching(/loopback or private/) });
    const unlisted = await activities({ allowedHosts: ['hooks.example.com'] }).deliverMerchantEvent({
      event: event(),
      url: 'http://127.0.0.1:9/e',
    });
    expect(unlisted).toEqual({ outcome: 'misconfigured', error: expect.stringMatching(/NOTIFY_ALLOWED_HOSTS/) });
  });
});

describe('the credit hand-over callback', () => {
  it('keeps 200 characters of at most 64 KiB read of an endless refusal, and refuses a private target in production', async () => {
    const merchant = await endpoint((_req, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'n');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const credit = { idempotencyKey: 'ref-1', credit: {} as never };
    try {
      const handler = httpCreditHandler({ url: `http://127.0.0.1:${merchant.port}/c`, secret: 'x'.repeat(32) });
      const refusal = await handler(credit).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(CreditHandlerRefused);
      expect((refusal as Error).message).toBe(`the credit handler refused the credit: HTTP 400 ${'n'.repeat(200)}`);
      const strict = httpCreditHandler({
        url: `http://127.0.0.1:${merchant.port}/c`,
        secret: 'x'.repeat(32),
        policy: STRICT_DEV,
      });
      await expect(strict(credit)).rejects.toThrow(/refused target: 127\.0\.0\.1/);
      expect(merchant.hits).toHaveLength(1);
    } finally {
      await merchant.close();
    }
  });
});

describe('the starter boundary', () => {
  const input = z.object({ notify: merchantEventTargetSchema.optional() });
  const parse = (url: string) => () => parseStarterInput(input, { notify: { url } }, 'payment');

  it('refuses a notify.url with credentials or another scheme, naming the field', () => {
    expect(parse('https://user:pass@hooks.example.com/e')).toThrow(
      'notify.url must not carry credentials (user:password@)',
    );
    expect(parse('file:///etc/passwd')).toThrow('notify.url must be an http(s) URL');
    expect(parse(`https://hooks.example.com/${'a'.repeat(2100)}`)).toThrow(
      'notify.url must be at most 2048 characters',
    );
    expect(parse('https://hooks.example.com/e')()).toEqual({ notify: { url: 'https://hooks.example.com/e' } });
  });
});
