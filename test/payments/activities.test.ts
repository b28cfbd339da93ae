// The payment activities against a recording HTTP server, through the real API client: the
// fields the flows carry through (pass_charge, currency, metadata, sub_merchant_id,
// redirect_url, is_recurring) reach the service; failures are typed the way the workflows read
// them (a 400 is a refusal, a dropped connection an unknown outcome, verify's 400 "not found");
// and nothing logged carries card data or codes. Card data and codes come sealed in the real
// claim-check store: redeemed for the call, deleted once the service answered, kept when the
// answer was lost (a resend proved safe may need it), and an expired handle sends nothing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { PaymentsClient } from '../../src/api';
import { createActivities } from '../../src/activities';
import { ClaimCheckStore } from '../../src/claim-check/store';
import type { CardPaymentInput } from '../../src/shared/card-payment';
import { cardDisplay } from '../../src/shared/claim-check';
import type { CheckoutInput } from '../../src/shared/checkout';
import type { BankPaymentInput } from '../../src/shared/bank-payment';
import type { UssdPaymentInput } from '../../src/shared/ussd-payment';
import { createLogger } from '../../src/logging/logger';
import { loadConfig } from '../../src/config/config';
import { LogCapture, testConfig } from '../support/stack';

interface Seen {
  method: string;
  path: string;
  body: Record<string, unknown>;
}
let server: Server;
let base: string;
const seen: Seen[] = [];
let answer: (s: Seen) => { status: number; body?: unknown } | 'drop' = () => ({
  status: 200,
  body: { status: 200, success: true, message: 'ok', data: {} },
});

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = {
        method: req.method!,
        path: req.url!,
        body: chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {},
      };
      seen.push(s);
      const a = answer(s);
      if (a === 'drop') return req.socket.destroy();
      res.writeHead(a.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(a.body ?? {}));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const cfg = testConfig();
  claimCheck = await ClaimCheckStore.connect({
    databaseUrl: cfg.claimCheck.databaseUrl,
    keys: cfg.claimCheck.keys,
    ttlMs: 60_000,
  });
});
afterAll(async () => {
  await claimCheck.close();
  await new Promise((r) => server.close(r));
});
let claimCheck: ClaimCheckStore;
const opens = (handle: string, purpose: 'card' | 'otp') =>
  claimCheck.open(handle, purpose).then(
    () => true,
    () => false,
  );
beforeEach(() => {
  seen.length = 0;
});

const capture = new LogCapture();
// The worker's activities as registered (the payment flows' among them), built from real parts.
const activities = () =>
  createActivities({
    api: new PaymentsClient({ baseUrl: base, secretKey: 'sandbox_sk_test_key_000', timeoutMs: 2_000 }),
    logger: createLogger({ destination: capture }),
    config: loadConfig({}),
    claimCheck,
  });
const env = new MockActivityEnvironment();
const ok = (data: unknown) => ({ status: 200, body: { status: 200, success: true, message: 'ok', data } });
const failureOf = async (p: Promise<unknown>) =>
  (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as ApplicationFailure;

const sealedCard = async (number = '5200000000001096') => ({
  handle: await claimCheck.seal('card', { number, cvv: '321', expiryMonth: '12', expiryYear: '29' }),
  ...cardDisplay(number),
});

describe('the payment activities against a recording HTTP server, through the real API client', () => {
  it('B1 redeems the sealed card and carries currency, pass_charge, redirect_url and the card; the record is deleted once answered; nothing of the card is logged', async () => {
    answer = () =>
      ok({ transaction_ref: 'R1', transaction_status: 'ThreeDSecure', auth_url: 'https://3ds.example/R1' });
    const req: CardPaymentInput = {
      transactionRef: 'R1',
      amount: 20_000,
      currency: 'USD',
      passCharge: true,
      redirectUrl: 'https://shop.example/return',
      card: await sealedCard(),
      customer: { name: 'Ada', email: 'ada@example.com' },
    };
    const out = await env.run(activities().chargeCard, req);
    expect(await opens(req.card.handle, 'card')).toBe(false); // used: gone
    expect(out).toEqual({ transactionStatus: 'ThreeDSecure', authUrl: 'https://3ds.example/R1' });
    expect(seen[0]).toMatchObject({
      method: 'POST',
      path: '/transaction/initiate/process-payment',
      body: {
        transaction_reference: 'R1',
        amount: 20_000,
        currency: 'USD',
        pass_charge: true,
        redirect_url: 'https://shop.example/return',
        payment_method: 'card',
        card: { number: '5200000000001096', cvv: '321', expiry_month: '12', expiry_year: '29' },
      },
    });
    expect(capture.text).toContain('R1');
    expect(capture.text).not.toContain('5200000000001096');
    expect(capture.text).not.toContain('321');
  });

  it('A1 carries metadata, pass_charge, sub_merchant_id, callback_url, channels and is_recurring', async () => {
    answer = () => ok({ transaction_ref: 'C1', checkout_url: 'https://pay.example/C1' });
    const req: CheckoutInput = {
      transactionRef: 'C1',
      amount: 250_000,
      currency: 'NGN',
      email: 'ada@example.com',
      metadata: { order: 'A-1' },
      passCharge: true,
      subMerchantId: 'SUB-9',
      callbackUrl: 'https://shop.example/back',
      channels: ['card', 'transfer'],
      isRecurring: true,
    };
    await env.run(activities().initiateCheckout, req);
    expect(seen[0]).toMatchObject({
      path: '/transaction/initiate',
      body: {
        transaction_ref: 'C1',
        amount: '250000',
        currency: 'NGN',
        initiate_type: 'inline',
        metadata: { order: 'A-1' },
        pass_charge: true,
        sub_merchant_id: 'SUB-9',
        callback_url: 'https://shop.example/back',
        payment_channels: ['card', 'transfer'],
        is_recurring: true,
      },
    });
  });

  it('B3 and B5 carry pass_charge; A4 sends the stable reference', async () => {
    answer = (s) =>
      ok(
        s.body.payment_method === 'ussd'
          ? {
              auth_model: 'USSDCodeGenerated',
              ussd_details: { ussd_reference: '*058*000*1#', expiresAt: '2030-01-01T00:00:00Z' },
            }
          : { auth_model: 'ValidateOTP', transaction_status: 'Success' },
      );
    const customer = { name: 'Ada', email: 'ada@example.com' };
    const bank: BankPaymentInput = {
      transactionRef: 'B1',
      amount: 1_000,
      currency: 'NGN',
      passCharge: true,
      bank: { bankCode: '058', accountOrPhone: '0123456789' },
      customer,
    };
    const ussd: UssdPaymentInput = {
      transactionRef: 'U1',
      amount: 1_000,
      currency: 'NGN',
      passCharge: true,
      bankCode: '058',
      customer,
    };
    await env.run(activities().chargeBank, bank);
    await env.run(activities().initiateUssd, ussd);
    await env.run(activities().chargeToken, { tokenId: 'AUTH_1', amount: 1_000, reference: 'P-C2' });
    expect(seen.map((s) => s.body)).toMatchObject([
      {
        transaction_reference: 'B1',
        pass_charge: true,
        payment_method: 'bank',
        bank: { bank_code: '058', account_or_phoneno: '0123456789' },
      },
      { transaction_reference: 'U1', pass_charge: true, payment_method: 'ussd', ussd: { bank_code: '058' } },
      { transaction_ref: 'P-C2', token_id: 'AUTH_1', amount: 1_000 },
    ]);
  });

  it('a sealed card whose answer was lost stays without its CVV: the resend sends nothing and fails SecretUnavailable; an expired or used handle too', async () => {
    answer = () => 'drop';
    const card = await sealedCard();
    const req: CardPaymentInput = {
      transactionRef: 'R9',
      amount: 1_000,
      currency: 'NGN',
      card,
      customer: { name: 'Ada', email: 'ada@example.com' },
    };
    expect(await failureOf(env.run(activities().chargeCard, req))).toMatchObject({ type: 'OutcomeUnknown' });
    // Kept (a requery may prove a resend safe), but the CVV did not outlive the attempt.
    expect(await claimCheck.open(card.handle, 'card')).toEqual({
      number: '5200000000001096',
      expiryMonth: '12',
      expiryYear: '29',
    });
    answer = () => ok({ transaction_ref: 'R9', transaction_status: 'ValidateOTP' });
    seen.length = 0;
    expect(await failureOf(env.run(activities().chargeCard, req))).toMatchObject({
      type: 'SecretUnavailable',
      nonRetryable: true,
    });
    expect(seen).toHaveLength(0); // nothing sent without the CVV: the flow asks for the card again
    expect(await opens(card.handle, 'card')).toBe(false);
    const again = await sealedCard();
    await env.run(activities().chargeCard, { ...req, card: again }); // the card submitted again
    expect(seen).toHaveLength(1);
    expect(await opens(again.handle, 'card')).toBe(false);
    seen.length = 0;
    expect(await failureOf(env.run(activities().chargeCard, { ...req, card: again }))).toMatchObject({
      type: 'SecretUnavailable',
      nonRetryable: true,
    });
    const expired = await claimCheck.seal('otp', '123456', 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(await failureOf(env.run(activities().authorizeCard, 'R9', 'otp' as const, expired))).toMatchObject({
      type: 'SecretUnavailable',
      nonRetryable: true,
    });
    // A handle opens only for what it was sealed as: a card handle is no OTP.
    expect(
      await failureOf(env.run(activities().authorizeCard, 'R9', 'otp' as const, (await sealedCard()).handle)),
    ).toMatchObject({ type: 'SecretUnavailable' });
    expect(seen).toHaveLength(0);
  });

  it('a 400 is a refusal, a dropped connection an unknown outcome; verify reads 400 as "not found"', async () => {
    answer = () => ({ status: 400, body: { status: 400, success: false, message: 'Invalid OTP', data: null } });
    const refusedOtp = await claimCheck.seal('otp', '000000');
    expect(await failureOf(env.run(activities().authorizeCard, 'R2', 'otp' as const, refusedOtp))).toMatchObject({
      type: 'BadRequest',
      nonRetryable: true,
      message: expect.stringContaining('Invalid OTP'),
    });
    expect(seen[0].body).toMatchObject({ transaction_reference: 'R2', authorization: { otp: '000000' } });
    expect(await opens(refusedOtp, 'otp')).toBe(false); // the service answered: deleted
    answer = () => 'drop';
    expect(
      await failureOf(
        env.run(activities().authorizeCard, 'R2', 'otp' as const, await claimCheck.seal('otp', '123456')),
      ),
    ).toMatchObject({ type: 'OutcomeUnknown', nonRetryable: true });
    expect(capture.text).not.toContain('123456');
    answer = () => ({
      status: 400,
      body: { status: 400, success: false, message: 'Transaction R3 not found', data: null },
    });
    expect(await env.run(activities().lookupTransaction, 'R3')).toEqual({ found: false });
    answer = () =>
      ok({
        transaction_ref: 'R4',
        transaction_status: 'failed',
        transaction_amount: 5,
        merchant_amount: 4,
        transaction_currency_id: 'NGN',
        transaction_type: 'Card',
        failure_reason: 'Insufficient funds',
      });
    expect(await env.run(activities().lookupTransaction, 'R4')).toEqual({
      found: true,
      status: 'Failed',
      amount: 5,
      merchantAmount: 4,
      currency: 'NGN',
      transactionType: 'Card',
      reason: 'Insufficient funds',
    });
    answer = () => ({
      status: 400,
      body: { status: 400, success: false, message: 'Recurring Payment was not cancelled', data: null },
    });
    expect(await env.run(activities().cancelToken, 'AUTH_1')).toBe(false);
  });

  it('A5: any 400 is the refusal, with the service’s message; a 5xx or a dropped answer is a retryable failure', async () => {
    answer = () => ({
      status: 400,
      body: { status: 400, success: false, message: 'Token does not belong to this merchant', data: null },
    });
    expect(await env.run(activities().cancelTokenAnswered, 'AUTH_1')).toEqual({
      cancelled: false,
      refusal: 'Token does not belong to this merchant',
    });
    expect(await env.run(activities().cancelToken, 'AUTH_1')).toBe(false);
    answer = () => ({
      status: 200,
      body: { status: 200, success: true, message: 'ok', data: { auth_code: ['AUTH_1'] } },
    });
    expect(await env.run(activities().cancelTokenAnswered, 'AUTH_1')).toEqual({ cancelled: true });
    for (const reply of [
      { status: 503, body: { status: 503, success: false, message: 'Service Unavailable', data: null } },
      'drop' as const,
    ]) {
      answer = () => reply;
      expect(await failureOf(env.run(activities().cancelTokenAnswered, 'AUTH_1'))).toMatchObject({
        nonRetryable: false,
      });
    }
  });

  it('verify: only the documented not-found is absence; another 400, a route 404 or a proxy page is an error', async () => {
    for (const reply of [
      { status: 400, body: { status: 400, success: false, message: 'transaction_ref is required', data: null } },
      { status: 404, body: { status: 404, success: false, message: 'Route not found', data: null } },
      { status: 404, body: '<html><body>404 Not Found</body></html>' },
      { status: 400, body: '<html>Bad Request</html>' },
    ]) {
      answer = () => reply;
      const failure = await failureOf(env.run(activities().lookupTransaction, 'R5'));
      expect(failure).toBeInstanceOf(ApplicationFailure);
    }
  });
});
