// Direct card, bank and USSD payments (B1-B5), verify-by-reference, and the E-1 payment
// webhook the service sends on every success.
import { createHmac, randomUUID } from 'node:crypto';
import { fail, ok, randomDigits, requireFields, type SandboxCore } from './core';

export const SANDBOX_PIN = '1234';
export const SANDBOX_OTP = '123456';
export const STEP_LIFETIME_MS = 10 * 60 * 1000;
export const TEST_CARDS = {
  otpOnly: '4242424242424242', // ValidateOTP below 750000 kobo (7,500 NGN); ValidatePin first at or above
  threeDs: '5200000000001096',
  pinThenOtp: '5555555555554444',
  declined: '4000000000000002',
} as const;

type Status = 'ValidatePin' | 'ValidateOTP' | 'ThreeDSecure' | 'ValidateTOKEN' | 'USSDCodeGenerated' | 'Success' | 'Failed' | 'Abandoned';

interface Txn {
  ref: string;
  type: 'Card' | 'Bank' | 'Ussd';
  amount: number;
  currency: string;
  status: Status;
  stepDeadline: number;
  wrongTries: number;
  email: string;
  redirectUrl?: string;
  gatewayRef: string;
  key: string;
  createdAt: string;
  pan?: string;
}

export interface WebhookOptions {
  url?: string;
  retryScheduleMs: number[];
  logger?: { warn(...a: unknown[]): void };
}

export function registerDirect(core: SandboxCore, publicUrl: () => string, webhook: WebhookOptions) {
  const txns = new Map<string, Txn>();
  const deliveries: { ref: string; attempt: number; status: number | 'error'; at: string }[] = [];
  const webhookFaults: { kind: 'duplicate' | 'fail'; count: number }[] = [];

  async function deliver(t: Txn, body: string, attempt: number): Promise<void> {
    if (!webhook.url) return;
    const failing = webhookFaults.find((f) => f.kind === 'fail' && f.count > 0);
    let status: number | 'error';
    if (failing) {
      failing.count -= 1;
      status = 'error';
    } else {
      const signature = createHmac('sha512', t.key).update(body).digest('hex').toUpperCase();
      status = await fetch(webhook.url, { method: 'POST', body, headers: { 'Content-Type': 'application/json', 'x-service-encrypted-body': signature } }).then(
        (r) => r.status,
        () => 'error' as const,
      );
    }
    deliveries.push({ ref: t.ref, attempt, status, at: core.clock.iso() });
    const delivered = typeof status === 'number' && status >= 200 && status < 300;
    if (!delivered && attempt <= webhook.retryScheduleMs.length) {
      setTimeout(() => void deliver(t, body, attempt + 1), webhook.retryScheduleMs[attempt - 1]).unref();
    }
  }

  function succeed(t: Txn): void {
    t.status = 'Success';
    const kind = t.type === 'Card' ? 'card_charge' : t.type === 'Bank' ? 'bank_debit' : 'ussd';
    core.record(kind, t.ref, t.amount, t.currency);
    const body = JSON.stringify({
      Event: 'charge_successful',
      TransactionRef: t.ref,
      Body: {
        amount: t.amount, transaction_ref: t.ref, gateway_ref: t.gatewayRef, transaction_status: 'Success', email: t.email, merchant_id: 'SBXMERCHANT',
        currency: t.currency, transaction_type: t.type, merchant_amount: t.amount, created_at: t.createdAt, meta: {},
        payment_information: t.pan ? { payment_type: 'card', pan: `${t.pan.slice(0, 6)}******${t.pan.slice(-4)}|12/29`, card_type: 'visa' } : { payment_type: t.type.toLowerCase() },
        is_recurring: false,
      },
    });
    const dup = webhookFaults.find((f) => f.kind === 'duplicate' && f.count > 0);
    if (dup) dup.count -= 1;
    void deliver(t, body, 1);
    if (dup) void deliver(t, body, 1);
  }

  /** Fails transactions whose step outlived its lifetime (sandbox clock). */
  function expire(t: Txn): void {
    if (!['Success', 'Failed', 'Abandoned'].includes(t.status) && core.clock.now() > t.stepDeadline) t.status = t.status === 'USSDCodeGenerated' ? 'Abandoned' : 'Failed';
  }

  const view = (t: Txn, message: string, extra: Record<string, unknown> = {}) => ({
    amount: t.amount, transaction_ref: t.ref, currency: t.currency, transaction_type: t.type, gateway_ref: t.gatewayRef, merchant_amount: t.amount, message, ...extra,
  });

  core.route('POST', '/transaction/initiate/process-payment', 'direct', ({ body, secretKey }) => {
    const missing = requireFields(body, ['amount', 'payment_method', 'customer']);
    if (missing) return missing;
    const amount = body.amount;
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) return fail(400, 'amount must be an integer in the lowest unit');
    const ref = String(body.transaction_reference ?? `SBX${randomDigits(14)}`);
    if (txns.has(ref)) return fail(400, 'Duplicate transaction reference');
    const customer = (body.customer ?? {}) as Record<string, unknown>;
    const base: Txn = {
      ref, type: 'Card', amount, currency: String(body.currency ?? 'NGN'), status: 'Failed', stepDeadline: core.clock.now() + STEP_LIFETIME_MS, wrongTries: 0,
      email: String(customer.email ?? ''), redirectUrl: typeof body.redirect_url === 'string' ? body.redirect_url : undefined, gatewayRef: `${ref}_1`, key: secretKey,
      createdAt: core.clock.iso(),
    };
    switch (body.payment_method) {
      case 'card': {
        const card = (body.card ?? {}) as Record<string, unknown>;
        const cardMissing = requireFields(card, ['number', 'cvv', 'expiry_month', 'expiry_year']);
        if (cardMissing) return fail(400, `card.${(cardMissing.body as { message: string }).message}`);
        const pan = String(card.number);
        base.pan = pan;
        if (pan === TEST_CARDS.declined) {
          txns.set(ref, base);
          return fail(400, 'Card declined');
        }
        if (pan === TEST_CARDS.threeDs) base.status = 'ThreeDSecure';
        else if (pan === TEST_CARDS.pinThenOtp) base.status = 'ValidatePin';
        else if (pan === TEST_CARDS.otpOnly) base.status = amount < 750_000 ? 'ValidateOTP' : 'ValidatePin';
        else return fail(400, 'Card not supported in the sandbox');
        txns.set(ref, base);
        const extra = base.status === 'ThreeDSecure' ? { auth_url: `${publicUrl()}/3ds/${encodeURIComponent(ref)}` } : {};
        return ok(view(base, 'Charge attempted', { transaction_status: base.status, ...extra }));
      }
      case 'bank': {
        const bank = (body.bank ?? {}) as Record<string, unknown>;
        const bankMissing = requireFields(bank, ['bank_code', 'account_or_phoneno']);
        if (bankMissing) return bankMissing;
        base.type = 'Bank';
        base.status = String(bank.account_or_phoneno).startsWith('1') ? 'ValidateTOKEN' : 'ValidateOTP';
        txns.set(ref, base);
        return ok(view(base, 'Charge attempted', { auth_model: base.status }));
      }
      case 'ussd': {
        const ussd = (body.ussd ?? {}) as Record<string, unknown>;
        const ussdMissing = requireFields(ussd, ['bank_code']);
        if (ussdMissing) return ussdMissing;
        base.type = 'Ussd';
        base.status = 'USSDCodeGenerated';
        txns.set(ref, base);
        return ok(view(base, 'USSD Payment Reference Generated', {
          auth_model: 'USSDCodeGenerated',
          ussd_details: { ussd_reference: `*${String(ussd.bank_code)}*000*${randomDigits(6)}#`, expiresAt: core.clock.iso(base.stepDeadline) },
        }), 'USSD Payment Reference Generated');
      }
      default:
        return fail(400, 'payment_method must be card, bank or ussd');
    }
  });

  core.route('POST', '/transaction/payment/authorize', 'direct', ({ body }) => {
    const missing = requireFields(body, ['transaction_reference', 'authorization']);
    if (missing) return missing;
    const t = txns.get(String(body.transaction_reference));
    if (!t || t.type !== 'Card') return fail(400, 'Transaction not found');
    expire(t);
    if (t.status === 'Failed') return fail(400, 'Transaction has expired or failed');
    const auth = (body.authorization ?? {}) as Record<string, unknown>;
    const wrong = (what: string) => {
      t.wrongTries += 1;
      if (t.wrongTries >= 3) t.status = 'Failed';
      return fail(400, `Invalid ${what}`);
    };
    if (t.status === 'ValidatePin' && auth.pin !== undefined) {
      if (String(auth.pin) !== SANDBOX_PIN) return wrong('PIN');
      t.status = 'ValidateOTP';
      t.wrongTries = 0;
      t.stepDeadline = core.clock.now() + STEP_LIFETIME_MS;
      return ok(view(t, 'PIN accepted, OTP sent', { transaction_status: 'ValidateOTP' }));
    }
    if (t.status === 'ValidateOTP' && auth.otp !== undefined) {
      if (String(auth.otp) !== SANDBOX_OTP) return wrong('OTP');
      succeed(t);
      return ok(view(t, 'Validate OTP Successful.', { transaction_status: 'Success' }), 'Validate OTP Successful.');
    }
    return fail(400, `Authorization does not match the transaction state ${t.status}`);
  });

  core.route('POST', '/transaction/validate-payment', 'direct', ({ body }) => {
    const missing = requireFields(body, ['transaction_reference', 'authorization']);
    if (missing) return missing;
    const t = txns.get(String(body.transaction_reference));
    if (!t || t.type !== 'Bank') return fail(400, 'Transaction not found');
    expire(t);
    if (t.status !== 'ValidateTOKEN' && t.status !== 'ValidateOTP') return fail(400, `Transaction is ${t.status}`);
    const model = t.status;
    const code = String(((body.authorization ?? {}) as Record<string, unknown>).otp_token ?? '');
    if (code !== SANDBOX_OTP) {
      t.wrongTries += 1;
      if (t.wrongTries >= 3) t.status = 'Failed';
      return fail(400, 'Invalid OTP or token');
    }
    succeed(t);
    return ok(view(t, 'Charge attempted', { auth_model: model, transaction_status: 'Success' }), 'Charge attempted');
  });

  core.route('GET', '/transaction/verify/{ref}', 'direct', ({ params }) => {
    const t = txns.get(params.ref);
    if (!t) return fail(400, `Transaction ${params.ref} not found`);
    expire(t);
    const status = t.status === 'Success' || t.status === 'Failed' || t.status === 'Abandoned' ? t.status : 'Pending';
    return ok({ transaction_ref: t.ref, transaction_status: status, transaction_amount: t.amount, transaction_currency_id: t.currency, transaction_type: t.type, gateway_transaction_ref: t.gatewayRef, created_at: t.createdAt, email: t.email });
  });

  /** The 3DS challenge page and its completion (payer side). */
  core.route('GET', '/3ds/{ref}', 'none', ({ params }) => {
    const t = txns.get(params.ref);
    if (!t || t.status !== 'ThreeDSecure') return { status: 404, html: '<!doctype html><p>No challenge pending</p>' };
    const ref = encodeURIComponent(t.ref);
    return { status: 200, html: `<!doctype html><html><body><h1>3-D Secure</h1><p>Amount ${t.amount}</p><form method="post" action="/3ds/${ref}/complete"><button type="submit">Complete</button></form></body></html>` };
  });
  core.route('POST', '/3ds/{ref}/complete', 'none', ({ params }) => {
    const t = txns.get(params.ref);
    if (!t || t.status !== 'ThreeDSecure') return { status: 404, html: '<!doctype html><p>No challenge pending</p>' };
    succeed(t);
    const target = t.redirectUrl ? `${t.redirectUrl}${t.redirectUrl.includes('?') ? '&' : '?'}reference=${encodeURIComponent(t.ref)}` : undefined;
    return { status: 200, html: `<!doctype html><p id="result">Payment successful</p>${target ? `<a id="continue" href="${target}">Continue</a>` : ''}` };
  });

  return {
    /** Admin: the payer dials the USSD code. */
    payUssd(ref: string): boolean {
      const t = txns.get(ref);
      if (!t || t.type !== 'Ussd') return false;
      expire(t);
      if (t.status !== 'USSDCodeGenerated') return false;
      succeed(t);
      return true;
    },
    deliveries: () => deliveries,
    addWebhookFault: (kind: 'duplicate' | 'fail', count: number) => webhookFaults.push({ kind, count }),
    newId: () => randomUUID(),
  };
}
