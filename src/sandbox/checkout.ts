// A. Hosted checkout: A1 initiate, the payment modal at checkout_url (a real HTML page with the
// authorized channels), its channels as plain HTTP (JSON) or form posts (HTML), and A2, the
// simulated transfer into the modal's dynamic account (registered with C9's path, "dva": true).
import { z } from 'zod';
import {
  authorizeCard,
  CARD_FIELDS,
  cardStatus,
  validateBankCode,
  withReference,
  PARTNER_BANK_CODE,
  TOKEN_ACCOUNT_PREFIX,
} from './direct';
import { isUssdBankCode, USSD_BANK_CODES } from '../api/schemas/direct';
import {
  asObject,
  escapeHtml,
  fail,
  formatAmount,
  htmlPage,
  MERCHANT_ID,
  MERCHANT_NAME,
  ok,
  positiveInteger as positiveIntegerValue,
  randomDigits,
  type Reply,
  type RequestContext,
  type Router,
} from './http';
import {
  cardFormatError,
  chargeFor,
  CHECKOUT_LIFETIME_MS,
  firstCardStep,
  type Payment,
  type PaymentStore,
} from './payments';
import {
  asIs,
  CODE,
  EMAIL,
  identifier,
  matching,
  oneOf,
  pathParams,
  positiveInteger,
  rule,
  type RequestInput,
  type RouteFields,
  type RuleBreak,
} from './validation';

export const CHANNELS = ['card', 'bank', 'ussd', 'transfer'] as const;
/** Dynamic accounts shown by the transfer channel start with this. */
export const DYNAMIC_ACCOUNT_PREFIX = '99';

/** A1's own error shape: `{success: false, message, data: null}` (no status, as the spec shows it). */
const a1Fail = (message: string, status = 400): Reply => ({ status, body: { success: false, message, data: null } });

const A1_FIELDS: RouteFields = {
  body: z.object({
    amount: positiveInteger('must be a positive integer in the lowest currency unit'),
    email: matching(EMAIL, 'must be a valid email'),
    currency: oneOf(['NGN', 'USD'], 'must be NGN or USD'),
    initiate_type: oneOf(['inline'], 'must be inline'),
    transaction_ref: identifier().optional().or(z.literal('')),
    payment_channels: rule(
      (v) => Array.isArray(v) && v.length > 0 && v.every((c) => (CHANNELS as readonly string[]).includes(String(c))),
      'must list card, bank, ussd or transfer',
    ).optional(),
    callback_url: matching(/^https?:\/\//, 'must be a valid uri').optional(),
  }),
};
/** The modal's pages and channel calls: the checkout's reference. */
const PAGE = pathParams('ref');

export interface CheckoutApi {
  /** A2: pays a checkout's dynamic account. */
  simulateTransfer(body: Record<string, unknown>): Reply;
  isDynamicAccount(account: string): boolean;
}

export function registerCheckout(router: Router, store: PaymentStore, publicUrl: () => string): CheckoutApi {
  const clock = store.clock;

  router.add('POST', '/transaction/initiate', 'checkout', A1_FIELDS, ({ body, secretKey }) => {
    const amount = positiveIntegerValue(body.amount)!;
    const currency = String(body.currency);
    const channels: string[] = Array.isArray(body.payment_channels)
      ? [...new Set(body.payment_channels.map(String))]
      : [...CHANNELS];
    const ref =
      body.transaction_ref === undefined || body.transaction_ref === '' ? store.newRef() : String(body.transaction_ref);
    if (store.byRef.has(ref)) return a1Fail('Duplicate transaction reference');
    const passCharge = body.pass_charge === true;
    const fee = chargeFor(amount);
    const isRecurring = body.is_recurring === true;
    const callbackUrl = typeof body.callback_url === 'string' ? body.callback_url : undefined;
    const p = store.create({
      ref,
      origin: 'checkout',
      type: 'Card',
      amount: passCharge ? amount + fee : amount,
      merchantAmount: passCharge ? amount : amount - fee,
      fee,
      currency,
      email: String(body.email),
      customerName: typeof body.customer_name === 'string' ? body.customer_name : null,
      meta: { ...asObject(body.metadata) },
      isRecurring,
      key: secretKey,
      checkout: { channels, callbackUrl, expiresAt: clock.now() + CHECKOUT_LIFETIME_MS, passCharge },
    });
    p.step = 'choose';
    return ok({
      auth_url: null,
      access_token: null,
      merchant_info: {
        merchant_response: null,
        merchant_name: MERCHANT_NAME,
        merchant_logo: null,
        merchant_id: MERCHANT_ID,
      },
      currency,
      recurring: {
        frequency: null,
        duration: null,
        plan_code: null,
        customer_name: p.customerName,
        type: isRecurring ? 1 : 0,
      },
      is_recurring: isRecurring,
      plan_code: null,
      callback_url: callbackUrl ?? '',
      transaction_ref: ref,
      transaction_memo: null,
      transaction_amount: amount,
      authorized_channels: channels,
      checkout_url: `${publicUrl()}/checkout/${encodeURIComponent(ref)}`,
    });
  });

  // ---- The modal ----
  /** Its channel calls: a form post with a bad field gets the modal back, showing the error. */
  const page: RouteFields = {
    params: PAGE,
    formError: (message, ctx) => answer(ctx, fail(400, message), store.get(ctx.params.ref)),
  };
  router.add('GET', '/checkout/{ref}', 'none', page, ({ params }) => {
    const p = store.get(params.ref);
    if (!p?.checkout) return htmlPage(404, 'Checkout', '<p class="error">Unknown checkout.</p>');
    return modalPage(p);
  });

  /** Finds the checkout for a channel call, or the reply refusing it. */
  function open(ctx: RequestContext, channel: (typeof CHANNELS)[number]): Payment | Reply {
    const p = store.get(ctx.params.ref);
    if (!p?.checkout) return answer(ctx, fail(404, 'Checkout not found'), p);
    if (p.status !== 'Pending') return answer(ctx, fail(400, `Checkout is ${p.status}`), p);
    if (!p.checkout.channels.includes(channel))
      return answer(ctx, fail(400, `The ${channel} channel is not authorized for this checkout`), p);
    return p;
  }
  const isReply = (v: Payment | Reply): v is Reply => 'status' in v && typeof v.status === 'number';

  /** The card's own values need no checkout: a malformed card is refused before the checkout is looked up. */
  const cardRules = ({ body }: RequestInput): RuleBreak | undefined => {
    const malformed = cardFormatError(body);
    return malformed ? { message: malformed } : undefined;
  };
  router.add('POST', '/checkout/{ref}/card', 'none', { ...page, body: CARD_FIELDS, rules: cardRules }, (ctx) => {
    const p = open(ctx, 'card');
    if (isReply(p)) return p;
    const first = firstCardStep(ctx.body, p.amount, clock.now());
    if ('error' in first) return answer(ctx, fail(400, first.error), p);
    store.restartCheckout(p);
    p.type = 'Card';
    p.card = { pan: first.pan, expiry: first.expiry };
    store.setStep(p, first.step);
    if (ctx.form && first.step === '3ds') return { status: 303, location: `/3ds/${encodeURIComponent(p.ref)}` };
    return answer(
      ctx,
      ok({
        transaction_ref: p.ref,
        transaction_status: cardStatus(p),
        ...(first.step === '3ds' ? { auth_url: `${publicUrl()}/3ds/${encodeURIComponent(p.ref)}` } : {}),
      }),
      p,
    );
  });

  router.add(
    'POST',
    '/checkout/{ref}/authorize',
    'none',
    {
      ...page,
      body: z
        .object({ pin: CODE.optional(), otp: CODE.optional() })
        .refine((b) => b.pin !== undefined || b.otp !== undefined, asIs(['pin'], 'or otp is required')),
    },
    (ctx) => {
      const p = open(ctx, 'card');
      if (isReply(p)) return p;
      if (!p.card) return answer(ctx, fail(400, 'No card payment in progress'), p);
      const reply = authorizeCard(store, p, ctx.body);
      if (reply.status !== 200) return answer(ctx, reply, p);
      return answer(ctx, ok({ transaction_ref: p.ref, transaction_status: cardStatus(p) }), p);
    },
  );

  /** Bank channel: {account_or_phoneno[, bank_code]} gives the auth_model; the code comes with it or in /bank/validate. */
  router.add(
    'POST',
    '/checkout/{ref}/bank',
    'none',
    {
      ...page,
      body: z.object({
        account_or_phoneno: matching(/^\d{10,13}$/, 'must be a 10-digit account number or a phone number'),
        bank_code: CODE.optional(),
        otp_token: CODE.optional().or(z.literal('')),
      }),
      // The partner bank needs no checkout: another bank is refused before the checkout is looked up.
      rules: ({ body }) =>
        String(body.bank_code ?? PARTNER_BANK_CODE) !== PARTNER_BANK_CODE
          ? { message: `Bank debit is only available for bank_code ${PARTNER_BANK_CODE}` }
          : undefined,
    },
    (ctx) => {
      const p = open(ctx, 'bank');
      if (isReply(p)) return p;
      const account = String(ctx.body.account_or_phoneno);
      const bankCode = String(ctx.body.bank_code ?? PARTNER_BANK_CODE);
      store.restartCheckout(p);
      p.type = 'Bank';
      p.bank = { account, bankCode };
      p.authModel = account.startsWith(TOKEN_ACCOUNT_PREFIX) ? 'ValidateTOKEN' : 'ValidateOTP';
      store.setStep(p, 'bank-code');
      if (ctx.body.otp_token !== undefined && ctx.body.otp_token !== '') return bankCode_(ctx, p);
      return answer(ctx, ok({ transaction_ref: p.ref, transaction_status: 'Pending', auth_model: p.authModel }), p);
    },
  );

  router.add(
    'POST',
    '/checkout/{ref}/bank/validate',
    'none',
    { ...page, body: z.object({ otp_token: CODE }) },
    (ctx) => {
      const p = open(ctx, 'bank');
      if (isReply(p)) return p;
      if (p.step !== 'bank-code') return answer(ctx, fail(400, 'No bank payment in progress'), p);
      if (ctx.body.otp_token === undefined || ctx.body.otp_token === '')
        return answer(ctx, fail(400, 'otp_token is required'), p);
      return bankCode_(ctx, p);
    },
  );

  function bankCode_(ctx: RequestContext, p: Payment): Reply {
    const model = p.authModel;
    const reply = validateBankCode(store, p, String(ctx.body.otp_token));
    if (reply.status !== 200) return answer(ctx, reply, p);
    return answer(
      ctx,
      ok({ transaction_ref: p.ref, transaction_status: 'Success', auth_model: model }, 'Charge attempted'),
      p,
    );
  }

  /** USSD channel: a code to dial; the payer "dials" with POST /__admin/ussd/{ref}/pay before the checkout expires. */
  router.add(
    'POST',
    '/checkout/{ref}/ussd',
    'none',
    {
      ...page,
      body: z.object({ bank_code: oneOf(USSD_BANK_CODES, 'is not a supported USSD bank code').optional() }),
    },
    (ctx) => {
      const p = open(ctx, 'ussd');
      if (isReply(p)) return p;
      const bankCode = String(ctx.body.bank_code ?? PARTNER_BANK_CODE);
      if (!isUssdBankCode(bankCode)) return answer(ctx, fail(400, 'bank_code is not a supported USSD bank code'), p);
      store.restartCheckout(p);
      p.type = 'Ussd';
      p.ussd = { code: `*${bankCode}*000*${randomDigits(6)}#`, bankCode, expiresAt: p.checkout!.expiresAt };
      p.step = 'ussd';
      return answer(
        ctx,
        ok({ transaction_ref: p.ref, ussd_reference: p.ussd.code, expiresAt: clock.iso(p.ussd.expiresAt) }),
        p,
      );
    },
  );

  /** Transfer channel: the dynamic account to pay (A2 pays it in the sandbox). */
  router.add('POST', '/checkout/{ref}/transfer', 'none', page, (ctx) => {
    const p = open(ctx, 'transfer');
    if (isReply(p)) return p;
    p.checkout!.dynamicAccount ??= `${DYNAMIC_ACCOUNT_PREFIX}${randomDigits(8)}`;
    return answer(
      ctx,
      ok({
        transaction_ref: p.ref,
        virtual_account_number: p.checkout!.dynamicAccount,
        amount: p.amount,
        bank: 'Sandbox Partner Bank',
        expiresAt: clock.iso(p.checkout!.expiresAt),
      }),
      p,
    );
  });

  /** JSON for plain HTTP callers; for the modal's forms, the next page (or the redirect after success). */
  function answer(ctx: RequestContext, reply: Reply, p: Payment | undefined): Reply {
    if (!ctx.form) return reply;
    if (!p?.checkout) return htmlPage(reply.status, 'Checkout', `<p class="error">${escapeHtml(message(reply))}</p>`);
    if (p.status === 'Success') {
      if (p.checkout.callbackUrl) return { status: 303, location: withReference(p.checkout.callbackUrl, p.ref) };
      return htmlPage(200, 'Payment successful', `<p id="result">Payment ${escapeHtml(p.ref)} successful.</p>`);
    }
    return modalPage(p, reply.status === 200 ? undefined : message(reply), reply.status === 200 ? 200 : reply.status);
  }

  function modalPage(p: Payment, error?: string, status = 200): Reply {
    const c = p.checkout!;
    const ref = encodeURIComponent(p.ref);
    const head =
      `<p>${escapeHtml(MERCHANT_NAME)} · <strong id="amount">${escapeHtml(formatAmount(p.amount, p.currency))}</strong> · ${escapeHtml(p.email)}</p>` +
      `<p id="status" data-status="${escapeHtml(p.status)}">Status: ${escapeHtml(p.status)}</p>` +
      (error ? `<p class="error" id="error">${escapeHtml(error)}</p>` : '');
    if (p.status !== 'Pending') return htmlPage(status, `Checkout ${p.ref}`, head);
    let step = '';
    if (p.step === 'pin')
      step = form(
        `/checkout/${ref}/authorize`,
        'Enter the card PIN',
        '<label>PIN <input name="pin" type="password" inputmode="numeric" maxlength="4" autocomplete="off"></label>',
        'Submit PIN',
      );
    else if (p.step === 'otp')
      step = form(
        `/checkout/${ref}/authorize`,
        'Enter the OTP sent to you',
        '<label>OTP <input name="otp" inputmode="numeric" maxlength="8" autocomplete="one-time-code"></label>',
        'Submit OTP',
      );
    else if (p.step === '3ds')
      step = `<section><p>Complete the 3-D Secure challenge: <a href="/3ds/${ref}" id="auth-url">continue</a></p></section>`;
    else if (p.step === 'bank-code') {
      const what =
        p.authModel === 'ValidateTOKEN'
          ? 'the 6-digit code from your token'
          : 'the OTP sent to the phone linked to the account';
      step = form(
        `/checkout/${ref}/bank/validate`,
        `Enter ${what}`,
        '<label>Code <input name="otp_token" inputmode="numeric" maxlength="8" autocomplete="off"></label>',
        'Pay',
      );
    } else if (p.step === 'ussd' && p.ussd)
      step = `<section><p>Dial <strong id="ussd-code">${escapeHtml(p.ussd.code)}</strong> before ${escapeHtml(clock.iso(p.ussd.expiresAt))}.</p></section>`;
    const sections: string[] = [];
    if (c.channels.includes('card')) {
      sections.push(
        form(
          `/checkout/${ref}/card`,
          'Card',
          '<label>Card number <input name="number" inputmode="numeric" autocomplete="cc-number"></label>' +
            '<label>CVV <input name="cvv" inputmode="numeric" maxlength="4" autocomplete="cc-csc"></label>' +
            '<label>Expiry month <input name="expiry_month" maxlength="2" placeholder="MM"></label>' +
            '<label>Expiry year <input name="expiry_year" maxlength="2" placeholder="YY"></label>',
          'Pay by card',
          'card',
        ),
      );
    }
    if (c.channels.includes('bank')) {
      sections.push(
        form(
          `/checkout/${ref}/bank`,
          'Bank account',
          `<input type="hidden" name="bank_code" value="${PARTNER_BANK_CODE}"><label>Account number <input name="account_or_phoneno" inputmode="numeric" maxlength="13"></label>`,
          'Pay from bank account',
          'bank',
        ),
      );
    }
    if (c.channels.includes('ussd')) {
      const options = USSD_BANK_CODES.map(
        (b) => `<option value="${b}"${b === PARTNER_BANK_CODE ? ' selected' : ''}>${b}</option>`,
      ).join('');
      sections.push(
        form(
          `/checkout/${ref}/ussd`,
          'USSD',
          `<label>Bank <select name="bank_code">${options}</select></label>`,
          'Get a USSD code',
          'ussd',
        ),
      );
    }
    if (c.channels.includes('transfer')) {
      const account = c.dynamicAccount
        ? `<p>Transfer ${escapeHtml(formatAmount(p.amount, p.currency))} to <strong id="virtual-account-number">${escapeHtml(c.dynamicAccount)}</strong> (Sandbox Partner Bank).</p>`
        : '';
      sections.push(
        `<section data-channel="transfer"><h2>Transfer</h2>${account}<form method="post" action="/checkout/${ref}/transfer"><button type="submit">Pay by transfer</button></form></section>`,
      );
    }
    const expires = `<p class="muted">This checkout expires at ${escapeHtml(clock.iso(c.expiresAt))} (sandbox clock).</p>`;
    return htmlPage(status, `Checkout ${p.ref}`, head + step + sections.join('') + expires);
  }

  function simulateTransfer(body: Record<string, unknown>): Reply {
    const account = String(body.virtual_account_number);
    const p = [...store.byRef.values()].find((x) => x.checkout?.dynamicAccount === account);
    if (!p) return fail(404, 'Virtual account not found');
    store.refresh(p);
    if (p.status !== 'Pending') return fail(400, `Checkout is ${p.status}`);
    const amount = positiveIntegerValue(body.amount);
    if (amount !== p.amount) return fail(400, `amount does not match the amount due (${p.amount})`);
    store.restartCheckout(p);
    p.type = 'Transfer';
    store.succeed(p);
    return ok('Payment successful');
  }

  return {
    simulateTransfer,
    isDynamicAccount: (account) => [...store.byRef.values()].some((x) => x.checkout?.dynamicAccount === account),
  };
}

function form(action: string, title: string, fields: string, button: string, channel?: string): string {
  return `<section${channel ? ` data-channel="${channel}"` : ''}><h2>${escapeHtml(title)}</h2><form method="post" action="${action}">${fields}<button type="submit">${escapeHtml(button)}</button></form></section>`;
}

function message(reply: Reply): string {
  return String(asObject(reply.body).message ?? 'Request refused');
}
