// Direct card, bank and USSD payments (B1-B5), verify-by-reference, and the E-1 payment
// webhook the service sends on every success.
import { createHmac, randomUUID } from 'node:crypto';
import { fail, ok, randomDigits, requireFields, type Reply, type SandboxCore } from './core';

export const SANDBOX_PIN = '1234';
export const SANDBOX_OTP = '123456';
export const STEP_LIFETIME_MS = 10 * 60 * 1000;
export const CHECKOUT_LIFETIME_MS = 30 * 60 * 1000;
export const TEST_CARDS = {
  otpOnly: '4242424242424242', // ValidateOTP below 750000 kobo (7,500 NGN); ValidatePin first at or above
  threeDs: '5200000000001096',
  pinThenOtp: '5555555555554444',
  declined: '4000000000000002',
} as const;

type Status = 'ValidatePin' | 'ValidateOTP' | 'ThreeDSecure' | 'ValidateTOKEN' | 'USSDCodeGenerated' | 'Success' | 'Failed' | 'Abandoned';

interface Txn {
  ref: string;
  type: 'Card' | 'Bank' | 'Ussd' | 'Transfer';
  /** Hosted checkout: not yet paid through a channel. */
  checkout?: { channels: string[]; isRecurring: boolean; callbackUrl?: string; dynamicAccount?: string; expiresAt: number };
  isRecurring?: boolean;
  tokenId?: string;
  meta?: Record<string, unknown>;
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
  const tokens = new Map<string, { active: boolean; email: string; currency: string }>();
  const deliveries: { ref: string; attempt: number; status: number | 'error'; at: string }[] = [];
  const webhookFaults: { kind: 'duplicate' | 'fail' | 'hold'; count: number }[] = [];
  /** Deliveries held back by a 'hold' fault, released later in reverse order (out of order). */
  const held: (() => Promise<void>)[] = [];

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
    const kind = t.checkout ? 'checkout' : t.tokenId && !t.pan ? 'token_charge' : t.type === 'Card' ? 'card_charge' : t.type === 'Bank' ? 'bank_debit' : 'ussd';
    core.record(kind, t.ref, t.amount, t.currency);
    if (t.checkout?.isRecurring && t.pan && !t.tokenId) {
      t.tokenId = `AUTH_${randomDigits(12)}`;
      tokens.set(t.tokenId, { active: true, email: t.email, currency: t.currency });
    }
    const body = JSON.stringify({
      Event: 'charge_successful',
      TransactionRef: t.ref,
      Body: {
        amount: t.amount, transaction_ref: t.ref, gateway_ref: t.gatewayRef, transaction_status: 'Success', email: t.email, merchant_id: 'SBXMERCHANT',
        currency: t.currency, transaction_type: t.type, merchant_amount: t.amount, created_at: t.createdAt, meta: t.meta ?? {},
        payment_information: t.pan
          ? { payment_type: 'card', pan: `${t.pan.slice(0, 6)}******${t.pan.slice(-4)}|12/29`, card_type: 'visa', ...(t.tokenId ? { token_id: t.tokenId } : {}) }
          : t.tokenId
            ? { payment_type: 'card', token_id: t.tokenId }
            : { payment_type: t.type.toLowerCase() },
        is_recurring: Boolean(t.checkout?.isRecurring || t.isRecurring),
      },
    });
    const dup = webhookFaults.find((f) => f.kind === 'duplicate' && f.count > 0);
    if (dup) dup.count -= 1;
    const hold = webhookFaults.find((f) => f.kind === 'hold' && f.count > 0);
    const send = async () => {
      await deliver(t, body, 1);
      if (dup) await deliver(t, body, 1);
    };
    if (hold) {
      hold.count -= 1;
      held.push(send);
    } else void send();
  }

  /** Fails transactions whose step outlived its lifetime (sandbox clock). */
  function expire(t: Txn): void {
    if (t.checkout && t.status === 'Abandoned') return;
    if (t.checkout && !t.pan && t.status === 'ValidateOTP' && core.clock.now() > t.checkout.expiresAt) {
      t.status = 'Abandoned';
      return;
    }
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
    // E-3: back to the merchant's redirect URL with the reference (parameter name: our choice).
    const back = t.redirectUrl ?? t.checkout?.callbackUrl;
    if (back) return { status: 302, location: `${back}${back.includes('?') ? '&' : '?'}reference=${encodeURIComponent(t.ref)}` };
    return { status: 200, html: '<!doctype html><p id="result">Payment successful</p>' };
  });

  // ---- A1 hosted checkout, its page and channels, A2 simulate transfer ----
  core.route('POST', '/transaction/initiate', 'checkout', ({ body, secretKey }) => {
    const missing = requireFields(body, ['amount', 'email', 'currency', 'initiate_type']);
    if (missing) return { status: 400, body: { success: false, message: (missing.body as { message: string }).message, data: null } };
    const amount = Number(body.amount);
    if (!Number.isSafeInteger(amount) || amount <= 0) return fail(400, 'amount must be an integer in the lowest unit');
    if (!['NGN', 'USD'].includes(String(body.currency))) return fail(400, 'currency must be NGN or USD');
    const ref = String(body.transaction_ref ?? `SBX${randomDigits(14)}`);
    if (txns.has(ref)) return fail(400, 'Duplicate transaction reference');
    const channels = Array.isArray(body.payment_channels) && body.payment_channels.length ? body.payment_channels.map(String) : ['card', 'bank', 'ussd', 'transfer'];
    const isRecurring = body.is_recurring === true;
    const t: Txn = {
      ref, type: 'Card', amount, currency: String(body.currency), status: 'ValidateOTP', stepDeadline: core.clock.now() + CHECKOUT_LIFETIME_MS, wrongTries: 0,
      email: String(body.email), gatewayRef: `${ref}_1`, key: secretKey, createdAt: core.clock.iso(),
      meta: body.metadata && typeof body.metadata === 'object' ? (body.metadata as Record<string, unknown>) : undefined,
      checkout: { channels, isRecurring, callbackUrl: typeof body.callback_url === 'string' ? body.callback_url : undefined, expiresAt: core.clock.now() + CHECKOUT_LIFETIME_MS },
    };
    txns.set(ref, t);
    return ok({
      auth_url: null, access_token: null, merchant_info: { merchant_response: null, merchant_name: 'Sandbox Merchant', merchant_logo: null, merchant_id: 'SBXMERCHANT' },
      currency: t.currency, recurring: { frequency: null, duration: null, plan_code: null, customer_name: body.customer_name ?? null, type: 0 }, is_recurring: isRecurring,
      plan_code: null, callback_url: t.checkout!.callbackUrl ?? '', transaction_ref: ref, transaction_memo: null, transaction_amount: amount, authorized_channels: channels,
      checkout_url: `${publicUrl()}/checkout/${encodeURIComponent(ref)}`,
    });
  });

  const openCheckout = (ref: string) => {
    const t = txns.get(ref);
    if (!t?.checkout) return undefined;
    expire(t);
    return t.status === 'ValidateOTP' && !t.pan ? t : undefined;
  };

  core.route('GET', '/checkout/{ref}', 'none', ({ params }) => {
    const t = txns.get(params.ref);
    if (!t?.checkout) return { status: 404, html: '<!doctype html><p>Unknown checkout</p>' };
    expire(t);
    const ref = encodeURIComponent(t.ref);
    const channels = t.checkout.channels.map((c) => `<li data-channel="${c}">${c}</li>`).join('');
    return {
      status: 200,
      html: `<!doctype html><html><body><h1>Pay ${t.amount} ${t.currency}</h1><p id="status">${t.status === 'ValidateOTP' && !t.pan ? 'Pending' : t.status}</p><ul>${channels}</ul>` +
        `<form method="post" action="/checkout/${ref}/card"><input name="number"><input name="cvv"><input name="expiry_month"><input name="expiry_year"><button>Pay by card</button></form>` +
        `<form method="post" action="/checkout/${ref}/transfer"><button>Pay by transfer</button></form></body></html>`,
    };
  });

  /** The modal's card channel: the same test cards, PIN and OTP as the direct API. */
  core.route('POST', '/checkout/{ref}/card', 'none', ({ params, body }) => {
    const t = openCheckout(params.ref);
    if (!t || !t.checkout!.channels.includes('card')) return fail(400, 'Checkout is not open for card payment');
    const pan = String(body.number ?? '');
    if (pan === TEST_CARDS.declined) return fail(400, 'Card declined');
    if (pan === TEST_CARDS.threeDs) t.status = 'ThreeDSecure';
    else if (pan === TEST_CARDS.pinThenOtp) t.status = 'ValidatePin';
    else if (pan === TEST_CARDS.otpOnly) t.status = t.amount < 750_000 ? 'ValidateOTP' : 'ValidatePin';
    else return fail(400, 'Card not supported in the sandbox');
    t.pan = pan;
    t.stepDeadline = core.clock.now() + STEP_LIFETIME_MS;
    return ok({ transaction_ref: t.ref, transaction_status: t.status, ...(t.status === 'ThreeDSecure' ? { auth_url: `${publicUrl()}/3ds/${encodeURIComponent(t.ref)}` } : {}) });
  });

  core.route('POST', '/checkout/{ref}/authorize', 'none', ({ params, body }) => {
    const t = txns.get(params.ref);
    if (!t?.checkout || !t.pan) return fail(400, 'No card payment in progress');
    expire(t);
    if (t.status === 'ValidatePin' && String(body.pin) === SANDBOX_PIN) {
      t.status = 'ValidateOTP';
      return ok({ transaction_ref: t.ref, transaction_status: t.status });
    }
    if (t.status === 'ValidateOTP' && String(body.otp) === SANDBOX_OTP) {
      succeed(t);
      return ok({ transaction_ref: t.ref, transaction_status: 'Success' });
    }
    return fail(400, t.status === 'ValidatePin' ? 'Invalid PIN' : 'Invalid OTP');
  });

  /** The modal's bank channel: debit an account; the code is the sandbox OTP. */
  core.route('POST', '/checkout/{ref}/bank', 'none', ({ params, body }) => {
    const t = openCheckout(params.ref);
    if (!t || !t.checkout!.channels.includes('bank')) return fail(400, 'Checkout is not open for bank payment');
    if (!/^\d{10,11}$/.test(String(body.account_or_phoneno ?? ''))) return fail(400, 'account_or_phoneno is required');
    if (String(body.otp_token ?? '') !== SANDBOX_OTP) return fail(400, 'Invalid OTP or token');
    t.type = 'Bank';
    succeed(t);
    return ok({ transaction_ref: t.ref, transaction_status: 'Success' });
  });

  /** The modal's USSD channel: a code the payer dials (POST /__admin/ussd/{ref}/pay). */
  core.route('POST', '/checkout/{ref}/ussd', 'none', ({ params, body }) => {
    const t = openCheckout(params.ref);
    if (!t || !t.checkout!.channels.includes('ussd')) return fail(400, 'Checkout is not open for USSD payment');
    t.type = 'Ussd';
    return ok({ ussd_reference: `*${String(body.bank_code ?? '058')}*000*${randomDigits(6)}#`, expiresAt: core.clock.iso(t.checkout!.expiresAt) });
  });

  /** The modal's transfer channel: a dynamic account to pay into (A2 pays it in the sandbox). */
  core.route('POST', '/checkout/{ref}/transfer', 'none', ({ params }) => {
    const t = openCheckout(params.ref);
    if (!t || !t.checkout!.channels.includes('transfer')) return fail(400, 'Checkout is not open for transfer');
    t.checkout!.dynamicAccount ??= `99${randomDigits(8)}`;
    return ok({ virtual_account_number: t.checkout!.dynamicAccount, amount: t.amount, bank: 'Sandbox Partner Bank' });
  });

  /** A2 (with dva) pays a checkout's dynamic account; without it, C9 is answered by virtual accounts. */
  core.route('POST', '/virtual-account/simulate/payment', 'virtual-account', ({ body, secretKey }) => {
    const missing = requireFields(body, ['virtual_account_number']);
    if (missing) return missing;
    const account = String(body.virtual_account_number);
    const t = [...txns.values()].find((x) => x.checkout?.dynamicAccount === account);
    if (!t) return simulateVirtualAccount ? simulateVirtualAccount(body, secretKey) : fail(404, 'Virtual account not found');
    expire(t);
    if (t.status !== 'ValidateOTP' || t.pan) return fail(400, 'Checkout is no longer open');
    const amount = body.amount === undefined ? t.amount : Number(body.amount);
    if (amount !== t.amount) return fail(400, 'amount does not match the checkout amount');
    t.type = 'Transfer';
    succeed(t);
    return ok('Payment successful');
  });

  // ---- A4 charge a token, A5 cancel tokens, A6 query transactions ----
  core.route('POST', '/transaction/charge_card', 'direct', ({ body, secretKey }) => {
    if (typeof body.amount === 'number' && body.amount < 0) return fail(400, 'amount cannot be < 0');
    const missing = requireFields(body, ['amount', 'token_id', 'transaction_ref']);
    if (missing) return missing;
    const amount = body.amount;
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount === 0) return fail(400, 'amount must be an integer in the lowest unit');
    const token = tokens.get(String(body.token_id));
    if (!token?.active) return fail(400, 'Invalid or cancelled token');
    const ref = String(body.transaction_ref);
    if (txns.has(ref)) return fail(400, 'Duplicate transaction reference');
    const t: Txn = {
      ref, type: 'Card', amount, currency: token.currency, status: 'Success', stepDeadline: 0, wrongTries: 0, email: token.email, gatewayRef: `${ref}_1`, key: secretKey,
      createdAt: core.clock.iso(), tokenId: String(body.token_id), isRecurring: true,
    };
    txns.set(ref, t);
    succeed(t);
    return ok({
      transaction_amount: amount, transaction_ref: ref, email: token.email, transaction_status: 'Success', transaction_currency_id: token.currency, created_at: t.createdAt,
      transaction_type: 'Card', merchant_name: 'Sandbox Merchant', merchant_business_name: 'Sandbox Merchant', gateway_transaction_ref: t.gatewayRef, recurring: null,
      merchant_email: 'merchant@sandbox.local', plan_code: null,
    });
  });

  core.route('PATCH', '/transaction/cancel/recurring', 'direct', ({ body }) => {
    const ids = Array.isArray(body.auth_code) ? body.auth_code.map(String) : body.auth_code ? [String(body.auth_code)] : [];
    const cancelled = ids.filter((id) => tokens.get(id)?.active);
    for (const id of cancelled) tokens.get(id)!.active = false;
    if (cancelled.length === 0) return fail(400, 'Recurring Payment was not cancelled');
    return ok({ auth_code: cancelled });
  });

  core.route('GET', '/transaction', 'direct', ({ query }) => {
    const start = Date.parse(query.get('start_date') ?? '');
    const end = Date.parse(query.get('end_date') ?? '');
    if (Number.isNaN(start) || Number.isNaN(end) || end < start || end - start > 31 * 24 * 3600 * 1000) return fail(400, 'Bad Request');
    const reference = query.get('reference');
    const currency = query.get('currency');
    const rows = [...txns.values()]
      .filter((t) => (!reference || t.ref === reference) && (!currency || t.currency === currency))
      .filter((t) => Date.parse(t.createdAt) >= start && Date.parse(t.createdAt) < end + 24 * 3600 * 1000)
      .map((t, i) => {
        expire(t);
        const status = t.status === 'Success' || t.status === 'Failed' || t.status === 'Abandoned' ? t.status.toLowerCase() : 'pending';
        return {
          id: i + 1, transaction_amount: t.amount, transaction_ref: t.ref, email: t.email, merchant_id: 'SBXMERCHANT', merchant_amount: t.amount, merchant_name: 'Sandbox Merchant',
          merchant_business_name: 'Sandbox Merchant', merchant_email: 'merchant@sandbox.local', customer_email: t.email, customer_name: null, meta_data: JSON.stringify(t.meta ?? {}),
          meta: {}, transaction_status: status, transaction_charges: 0, transaction_currency_id: t.currency, transaction_gateway_id: t.gatewayRef, transaction_type: t.type,
          flat_charge: 0, is_suspicious: false, is_refund: false, created_at: t.createdAt,
        };
      });
    const perpage = Math.max(Number(query.get('perpage') ?? 50) || 50, 1);
    const page = Math.max(Number(query.get('page') ?? 1) || 1, 1);
    return ok(rows.slice((page - 1) * perpage, page * perpage));
  });

  let simulateVirtualAccount: ((body: Record<string, unknown>, key: string) => Reply) | undefined;

  return {
    /** Admin: the payer dials the USSD code. */
    payUssd(ref: string): boolean {
      const t = txns.get(ref);
      if (!t || t.type !== 'Ussd') return false;
      expire(t);
      const open = t.status === 'USSDCodeGenerated' || (t.checkout !== undefined && !t.pan && t.status === 'ValidateOTP');
      if (!open) return false;
      succeed(t);
      return true;
    },
    deliveries: () => deliveries,
    addWebhookFault: (kind: 'duplicate' | 'fail' | 'hold', count: number) => webhookFaults.push({ kind, count }),
    /** Sends the held deliveries, newest first. */
    releaseHeld: () => {
      const n = held.length;
      // One after another, so the receiver sees them in exactly the reversed order.
      void held.splice(0).reverse().reduce((prev, send) => prev.then(send), Promise.resolve());
      return n;
    },
    newId: () => randomUUID(),
    /** Virtual accounts answer C9 for accounts that are not a checkout's dynamic account. */
    setVirtualAccountSimulator(fn: (body: Record<string, unknown>, key: string) => Reply) {
      simulateVirtualAccount = fn;
    },
  };
}
