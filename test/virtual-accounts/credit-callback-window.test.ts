// The credit callback's replay window (issue #29, behaviour 4). The hand-over of a virtual-account
// credit to the merchant's backend is a POST we send (httpCreditHandler), signed
// `t=<unix seconds>,v1=HMAC-SHA256("<t>.<raw body>")`; the rule that refuses a replay lives on the
// merchant's side, in `verifyCreditCallback` (src/virtual-accounts/credit-handler.ts), which
// docs/flows-virtual-accounts.md tells merchants to use. So the callbacks here are real ones,
// received over HTTP from httpCreditHandler by a small merchant endpoint, and checked with that
// verifier: correctly signed, yet refused when the timestamp is more than 5 minutes old or more
// than 5 minutes in the future (the allowed skew), on the verifier's default tolerance. Also: the
// verifier refuses a malformed header as such, before any HMAC; the idempotency key travels as its
// own header; and the merchant's answer decides (2xx and 409 taken, other 4xx refused for good,
// 408/425/429 and 5xx asked again).
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import {
  CREDIT_IDEMPOTENCY_HEADER,
  CREDIT_SIGNATURE_HEADER,
  CreditHandlerRefused,
  httpCreditHandler,
  signCreditCallback,
  verifyCreditCallback,
} from '../../src/virtual-accounts/credit-handler';
import type { CreditedVirtualAccountTransaction } from '../../src/shared/virtual-account-credit';
import { closeServer, listen } from '../../src/webhooks/receiver';
import { vaCredit } from '../support/flow-inputs';

const SECRET = `cb_${randomUUID()}`;
const FIVE_MINUTES_S = 300;
const OUTSIDE = { ok: false, reason: 'the signature timestamp is outside the tolerance' };

/** What the merchant endpoint received: the raw bytes and the signature header, as sent. */
interface Received {
  raw: string;
  header: string | undefined;
  idempotencyKey: string | undefined;
  method?: string;
  contentType?: string;
}
const received: Received[] = [];
/** The status the merchant endpoint answers with (200 unless a test says otherwise). */
let answer = 200;
/** The body it answers with. */
let answerBody = '{"ok":true}';
/** Where it stops answering, if a test says: before its headers, or after them, mid-body. */
let hang: 'headers' | 'body' | undefined;
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sig = req.headers[CREDIT_SIGNATURE_HEADER];
      const key = req.headers[CREDIT_IDEMPOTENCY_HEADER];
      received.push({
        raw: Buffer.concat(chunks).toString('utf8'),
        header: typeof sig === 'string' ? sig : undefined,
        idempotencyKey: typeof key === 'string' ? key : undefined,
        method: req.method,
        contentType: req.headers['content-type'],
      });
      if (hang === 'headers') return;
      res.writeHead(answer, { 'content-type': 'application/json' });
      if (hang === 'body') return res.write('{"ok":');
      res.end(answerBody);
    });
  });
  url = await listen(server, 0);
});
afterAll(async () => {
  server.closeAllConnections();
  await closeServer(server);
});

/** The credit as the flow hands it over: a v1 notification's fields, from its signed body. */
function credit(ref: string): CreditedVirtualAccountTransaction {
  const { receivedAt: _received, ...fields } = vaCredit(ref, { version: 1 });
  return {
    ...fields,
    feeCharged: '25.00',
    transactionDate: '2026-11-22T10:00:00.000Z',
    fieldsSource: 'signed-body',
    creditedAt: new Date().toISOString(),
  };
}

/** One real hand-over: httpCreditHandler POSTs the credit to the merchant endpoint. */
async function handOver(): Promise<Received & { t: number }> {
  const ref = `va-${randomUUID()}`;
  const before = received.length;
  await httpCreditHandler({ url: `${url}/credits`, secret: SECRET })({ idempotencyKey: ref, credit: credit(ref) });
  expect(received).toHaveLength(before + 1);
  const callback = received[before]!;
  // The merchant's dedupe key travels as its own header too.
  expect(callback.idempotencyKey).toBe(ref);
  const t = Number(/^t=(\d+),v1=[0-9a-f]{64}$/.exec(callback.header ?? '')?.[1]);
  expect(Number.isInteger(t)).toBe(true);
  return { ...callback, t };
}

describe("the credit callback's replay window", () => {
  it('a callback just received verifies (the signature is right)', async () => {
    const cb = await handOver();
    expect(verifyCreditCallback(SECRET, cb.raw, cb.header)).toEqual({ ok: true });
  });

  it('the same correctly signed callback replayed more than 5 minutes later is refused; at 5 minutes it still verifies', async () => {
    const cb = await handOver();
    expect(verifyCreditCallback(SECRET, cb.raw, cb.header, { nowSeconds: cb.t + FIVE_MINUTES_S })).toEqual({
      ok: true,
    });
    expect(verifyCreditCallback(SECRET, cb.raw, cb.header, { nowSeconds: cb.t + FIVE_MINUTES_S + 1 })).toEqual(OUTSIDE);
    expect(verifyCreditCallback(SECRET, cb.raw, cb.header, { nowSeconds: cb.t + 24 * 3600 })).toEqual(OUTSIDE);
  });

  it('a correctly signed callback dated more than 5 minutes in the future is refused; 5 minutes of skew is allowed', async () => {
    const cb = await handOver();
    // The merchant's clock behind ours: the callback's timestamp is ahead of it.
    expect(verifyCreditCallback(SECRET, cb.raw, cb.header, { nowSeconds: cb.t - FIVE_MINUTES_S })).toEqual({
      ok: true,
    });
    expect(verifyCreditCallback(SECRET, cb.raw, cb.header, { nowSeconds: cb.t - FIVE_MINUTES_S - 1 })).toEqual(OUTSIDE);
    expect(verifyCreditCallback(SECRET, cb.raw, cb.header, { nowSeconds: cb.t - 24 * 3600 })).toEqual(OUTSIDE);
  });

  it("on the verifier's own clock: a callback signed 6 minutes ago or 6 minutes ahead is refused, one signed now verifies", async () => {
    const cb = await handOver();
    const now = Math.floor(Date.now() / 1000);
    const signedAt = (t: number) => signCreditCallback(SECRET, cb.raw, t);
    expect(verifyCreditCallback(SECRET, cb.raw, signedAt(now))).toEqual({ ok: true });
    expect(verifyCreditCallback(SECRET, cb.raw, signedAt(now - 360))).toEqual(OUTSIDE);
    expect(verifyCreditCallback(SECRET, cb.raw, signedAt(now + 360))).toEqual(OUTSIDE);
  });
});

describe('the callback verifier refuses a malformed header before any HMAC', () => {
  const MALFORMED = { ok: false, reason: `${CREDIT_SIGNATURE_HEADER} is missing or malformed` };

  it.each([
    ['no header', () => undefined],
    ['a timestamp that is not a whole number', (h: string) => h.replace(/^t=\d+/, 't=soon')],
    ['no v1', (h: string) => h.replace(/,v1=.*$/, '')],
    ['text before the digest', (h: string) => h.replace('v1=', 'v1=zz')],
    ['text after the digest', (h: string) => `${h}zz`],
    ['a digest in capitals', (h: string) => h.replace(/v1=(.*)$/, (_m, d: string) => `v1=${d.toUpperCase()}`)],
  ])('%s: missing or malformed', async (_label, change) => {
    const cb = await handOver();
    expect(verifyCreditCallback(SECRET, cb.raw, change(cb.header!))).toEqual(MALFORMED);
  });

  it('a well-formed header with another digest does not match', async () => {
    const cb = await handOver();
    const other = cb.header!.replace(/v1=([0-9a-f])/, (_m, c: string) => `v1=${c === 'a' ? 'b' : 'a'}`);
    expect(verifyCreditCallback(SECRET, cb.raw, other)).toEqual({ ok: false, reason: 'the signature does not match' });
  });
});

describe("the callback's answer rules", () => {
  afterEach(() => {
    answer = 200;
    answerBody = '{"ok":true}';
  });
  const handler = () => httpCreditHandler({ url: `${url}/credits`, secret: SECRET });
  const send = () => {
    const ref = `va-${randomUUID()}`;
    return handler()({ idempotencyKey: ref, credit: credit(ref) });
  };

  it('2xx and 409 (the merchant already has the key) are taken', async () => {
    answer = 201;
    await expect(send()).resolves.toEqual({ detail: 'HTTP 201' });
    answer = 409;
    await expect(send()).resolves.toEqual({ detail: 'HTTP 409: the handler already had this idempotency key' });
  });

  it.each([400, 404, 410, 499])('%i is a refusal for good (CreditHandlerRefused)', async (status) => {
    answer = status;
    const err = await send().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CreditHandlerRefused);
    expect((err as Error).message).toBe(`the credit handler refused the credit: HTTP ${status} {"ok":true}`);
    expect((err as Error).name).toBe('CreditHandlerRefused');
  });

  it("a refusal quotes at most 200 characters of the merchant's answer, and nothing when it is empty", async () => {
    answer = 400;
    answerBody = 'x'.repeat(500);
    const long = (await send().catch((e: unknown) => e)) as Error;
    expect(long.message).toBe(`the credit handler refused the credit: HTTP 400 ${'x'.repeat(200)}`);
    answerBody = '';
    const empty = (await send().catch((e: unknown) => e)) as Error;
    expect(empty.message).toBe('the credit handler refused the credit: HTTP 400');
  });

  it.each([300, 408, 425, 429, 500, 503])('%i is asked again (an ordinary error, retried)', async (status) => {
    answer = status;
    const err = await send().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(CreditHandlerRefused);
    expect((err as Error).message).toBe(`the credit handler answered HTTP ${status}; retried`);
  });
});

describe('what the callback sends, and how long it waits', () => {
  afterEach(() => {
    hang = undefined;
  });

  it("a signed JSON POST of the event 'virtual_account.credit' with the key and the credit; a released freeze when there was one", async () => {
    const ref = `va-${randomUUID()}`;
    const before = received.length;
    const releasedFreeze = { freezeTransactionRef: 'FRZ-1', reason: 'compliance review' };
    await httpCreditHandler({ url: `${url}/credits`, secret: SECRET })({
      idempotencyKey: ref,
      credit: credit(ref),
      releasedFreeze,
    });
    const sent = received[before]!;
    expect(sent).toMatchObject({ method: 'POST', contentType: 'application/json', idempotencyKey: ref });
    expect(JSON.parse(sent.raw)).toEqual({
      event: 'virtual_account.credit',
      idempotency_key: ref,
      credit: expect.objectContaining({ transactionReference: ref }),
      released_freeze: releasedFreeze,
    });
    const plain = await handOver();
    expect(JSON.parse(plain.raw)).not.toHaveProperty('released_freeze');
  });

  it.each([
    ['its headers', 'headers' as const],
    ['the rest of its body', 'body' as const],
  ])(
    'a merchant that never sends %s: the attempt ends after timeoutMs (an ordinary error, retried)',
    async (_what, where) => {
      hang = where;
      const ref = `va-${randomUUID()}`;
      const err = await httpCreditHandler({ url: `${url}/credits`, secret: SECRET, timeoutMs: 300 })({
        idempotencyKey: ref,
        credit: credit(ref),
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(CreditHandlerRefused);
    },
    5_000,
  ); // the default wait is 15 s: a timeoutMs not honoured fails here
});
