// Hosted checkout (A): the initiation (A1), the payment modal at checkout_url (a real HTML page with the
// authorized channels), its channels as plain HTTP (JSON) or form posts (HTML), and the
// simulated transfer into the modal's dynamic account (A2; registered with the simulated credit's path, "dva": true).
import { z } from 'zod';
import {
  afterPayment,
  authorizeCard,
  awaitBankCode,
  CARD_FIELDS,
  cardStatus,
  validateBankCode,
  PARTNER_BANK_CODE,
  ussdCode,
} from './direct';
import { isUssdBankCode, USSD_BANK_CODES } from '../api/schemas/direct';
import {
  addRoutes,
  asObject,
  escapeHtml,
  fail,
  formatAmount,
  htmlPage,
  MERCHANT_ID,
  MERCHANT_NAME,
  ok,
  randomDigits,
  type Reply,
  type RequestContext,
  type RouteHandler,
  type Router,
} from './http';
import type { SandboxClock } from './clock';
import {
  cardFormatError,
  amountsFor,
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
  positiveIntegerValue,
  rule,
  type RequestInput,
  type RouteFields,
  type RuleBreak,
} from './validation';

export const CHANNELS = ['card', 'bank', 'ussd', 'transfer'] as const;
/** Dynamic accounts shown by the transfer channel start with this. */
export const DYNAMIC_ACCOUNT_PREFIX = '99';

/** The initiation's own error shape: `{success: false, message, data: null}` (no status, as the spec shows it). */
const checkoutFail = (message: string, status = 400): Reply => ({
  status,
  body: { success: false, message, data: null },
});

const INITIATE_CHECKOUT_FIELDS: RouteFields = {
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
  /** Pays a checkout's dynamic account (A2). */
  simulateTransfer(body: Record<string, unknown>): Reply;
  isDynamicAccount(account: string): boolean;
}

/** What the checkout's handlers work with. */
interface CheckoutDeps {
  store: PaymentStore;
  /** Base of checkout_url and auth_url. */
  publicUrl: () => string;
}

/** A checkout, waiting in the modal for the payer to choose a channel (A1). */
function initiateCheckout({ store, publicUrl }: CheckoutDeps, { body, secretKey }: RequestContext): Reply {
  const amount = positiveIntegerValue(body.amount)!;
  const currency = String(body.currency);
  const channels: string[] = Array.isArray(body.payment_channels)
    ? [...new Set(body.payment_channels.map(String))]
    : [...CHANNELS];
  const ref = store.refFor(body.transaction_ref);
  if (store.byRef.has(ref)) return checkoutFail('Duplicate transaction reference');
  const passCharge = body.pass_charge === true;
  const isRecurring = body.is_recurring === true;
  const callbackUrl = typeof body.callback_url === 'string' ? body.callback_url : undefined;
  const p = store.create({
    ref,
    origin: 'checkout',
    type: 'Card',
    ...amountsFor(amount, passCharge),
    currency,
    email: String(body.email),
    customerName: typeof body.customer_name === 'string' ? body.customer_name : null,
    meta: { ...asObject(body.metadata) },
    isRecurring,
    key: secretKey,
    checkout: { channels, callbackUrl, expiresAt: store.clock.now() + CHECKOUT_LIFETIME_MS, passCharge },
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
}

/** The modal itself. */
function showModal({ store }: CheckoutDeps, { params }: RequestContext): Reply {
  const p = store.get(params.ref);
  if (!p?.checkout) return htmlPage(404, 'Checkout', '<p class="error">Unknown checkout.</p>');
  return modalPage(store.clock, p);
}

/** Finds the checkout for a channel call, or the reply refusing it. */
function open(store: PaymentStore, ctx: RequestContext, channel: (typeof CHANNELS)[number]): Payment | Reply {
  const p = store.get(ctx.params.ref);
  if (!p?.checkout) return answer(store, ctx, fail(404, 'Checkout not found'), p);
  if (p.status !== 'Pending') return answer(store, ctx, fail(400, `Checkout is ${p.status}`), p);
  if (!p.checkout.channels.includes(channel))
    return answer(store, ctx, fail(400, `The ${channel} channel is not authorized for this checkout`), p);
  return p;
}
const isReply = (v: Payment | Reply): v is Reply => 'status' in v && typeof v.status === 'number';

/** The card's own values need no checkout: a malformed card is refused before the checkout is looked up. */
const cardRules = ({ body }: RequestInput): RuleBreak | undefined => {
  const malformed = cardFormatError(body);
  return malformed ? { message: malformed } : undefined;
};

/** A channel call's step on its open checkout; the reply is shaped for the caller by `answer`. */
type ChannelStep = (deps: CheckoutDeps, ctx: RequestContext, p: Payment) => Reply;

/** A channel's handler: finds the checkout open for that channel (or refuses), takes the step, answers. */
const onChannel =
  (channel: (typeof CHANNELS)[number], step: ChannelStep): RouteHandler<CheckoutDeps> =>
  (deps, ctx) => {
    const p = open(deps.store, ctx, channel);
    if (isReply(p)) return p;
    const reply = step(deps, ctx, p);
    return reply.location === undefined ? answer(deps.store, ctx, reply, p) : reply;
  };

/** Card channel: the card's first step, as the direct charge takes it (B1). */
const payByCard = onChannel('card', ({ store, publicUrl }, ctx, p) => {
  const first = firstCardStep(ctx.body, p.amount, store.clock.now());
  if ('error' in first) return fail(400, first.error);
  store.restartCheckout(p);
  p.card = { pan: first.pan, expiry: first.expiry };
  store.setStep(p, first.step);
  if (ctx.form && first.step === '3ds') return { status: 303, location: `/3ds/${encodeURIComponent(p.ref)}` };
  const authUrl = first.step === '3ds' ? { auth_url: `${publicUrl()}/3ds/${encodeURIComponent(p.ref)}` } : {};
  return ok({ transaction_ref: p.ref, transaction_status: cardStatus(p), ...authUrl });
});

const AUTHORIZE_BODY = z
  .object({ pin: CODE.optional(), otp: CODE.optional() })
  .refine((b) => b.pin !== undefined || b.otp !== undefined, asIs(['pin'], 'or otp is required'));

/** Card channel: the PIN, then the OTP, as the direct authorize takes them (B2). */
const authorizeCheckoutCard = onChannel('card', ({ store }, ctx, p) => {
  if (!p.card) return fail(400, 'No card payment in progress');
  const reply = authorizeCard(store, p, ctx.body);
  return reply.status !== 200 ? reply : ok({ transaction_ref: p.ref, transaction_status: cardStatus(p) });
});

const BANK_BODY = z.object({
  account_or_phoneno: matching(/^\d{10,13}$/, 'must be a 10-digit account number or a phone number'),
  bank_code: CODE.optional(),
  otp_token: CODE.optional().or(z.literal('')),
});
// The partner bank needs no checkout: another bank is refused before the checkout is looked up.
const bankRules = ({ body }: RequestInput): RuleBreak | undefined =>
  String(body.bank_code ?? PARTNER_BANK_CODE) !== PARTNER_BANK_CODE
    ? { message: `Bank debit is only available for bank_code ${PARTNER_BANK_CODE}` }
    : undefined;

/** Bank channel: {account_or_phoneno[, bank_code]} gives the auth_model; the code comes with it or in /bank/validate. */
const payByBank = onChannel('bank', ({ store }, ctx, p) => {
  const account = String(ctx.body.account_or_phoneno);
  const bankCode = String(ctx.body.bank_code ?? PARTNER_BANK_CODE);
  store.restartCheckout(p, 'Bank');
  awaitBankCode(store, p, { account, bankCode });
  if (ctx.body.otp_token !== undefined && ctx.body.otp_token !== '') return checkBankCode(store, ctx, p);
  return ok({ transaction_ref: p.ref, transaction_status: 'Pending', auth_model: p.authModel });
});

/** Bank channel: the token or OTP, as the bank validation takes it (B4). */
const validateCheckoutBank = onChannel('bank', ({ store }, ctx, p) => {
  if (p.step !== 'bank-code') return fail(400, 'No bank payment in progress');
  if (ctx.body.otp_token === undefined || ctx.body.otp_token === '') return fail(400, 'otp_token is required');
  return checkBankCode(store, ctx, p);
});

function checkBankCode(store: PaymentStore, ctx: RequestContext, p: Payment): Reply {
  const model = p.authModel;
  const reply = validateBankCode(store, p, String(ctx.body.otp_token));
  if (reply.status !== 200) return reply;
  return ok({ transaction_ref: p.ref, transaction_status: 'Success', auth_model: model }, 'Charge attempted');
}

const USSD_BODY = z.object({ bank_code: oneOf(USSD_BANK_CODES, 'is not a supported USSD bank code').optional() });

/** USSD channel: a code to dial; the payer "dials" with POST /__admin/ussd/{ref}/pay before the checkout expires. */
const payByUssd = onChannel('ussd', ({ store }, ctx, p) => {
  const bankCode = String(ctx.body.bank_code ?? PARTNER_BANK_CODE);
  if (!isUssdBankCode(bankCode)) return fail(400, 'bank_code is not a supported USSD bank code');
  store.restartCheckout(p, 'Ussd');
  p.ussd = { code: ussdCode(bankCode), bankCode, expiresAt: p.checkout!.expiresAt };
  p.step = 'ussd';
  return ok({ transaction_ref: p.ref, ussd_reference: p.ussd.code, expiresAt: store.clock.iso(p.ussd.expiresAt) });
});

/** Transfer channel: the dynamic account to pay (a simulated transfer pays it in the sandbox, A2). */
const payByTransfer = onChannel('transfer', ({ store }, _ctx, p) => {
  const checkout = p.checkout!;
  checkout.dynamicAccount ??= `${DYNAMIC_ACCOUNT_PREFIX}${randomDigits(8)}`;
  return ok({
    transaction_ref: p.ref,
    virtual_account_number: checkout.dynamicAccount,
    amount: p.amount,
    bank: 'Sandbox Partner Bank',
    expiresAt: store.clock.iso(checkout.expiresAt),
  });
});

/** JSON for plain HTTP callers; for the modal's forms, the next page (or the redirect after success). */
function answer(store: PaymentStore, ctx: RequestContext, reply: Reply, p: Payment | undefined): Reply {
  if (!ctx.form) return reply;
  if (!p?.checkout) return htmlPage(reply.status, 'Checkout', `<p class="error">${escapeHtml(message(reply))}</p>`);
  if (p.status === 'Success') return afterPayment(p.ref, p.checkout.callbackUrl, 303);
  const refused = reply.status === 200 ? undefined : message(reply);
  return modalPage(store.clock, p, refused, reply.status);
}

function modalPage(clock: SandboxClock, p: Payment, error?: string, status = 200): Reply {
  const c = p.checkout!;
  const head =
    `<p>${escapeHtml(MERCHANT_NAME)} · <strong id="amount">${escapeHtml(formatAmount(p.amount, p.currency))}</strong> · ${escapeHtml(p.email)}</p>` +
    `<p id="status" data-status="${escapeHtml(p.status)}">Status: ${escapeHtml(p.status)}</p>` +
    (error ? `<p class="error" id="error">${escapeHtml(error)}</p>` : '');
  if (p.status !== 'Pending') return htmlPage(status, `Checkout ${p.ref}`, head);
  const ref = encodeURIComponent(p.ref);
  const sections = CHANNELS.filter((channel) => c.channels.includes(channel)).map((channel) =>
    CHANNEL_FORMS[channel](p, ref),
  );
  const expires = `<p class="muted">This checkout expires at ${escapeHtml(clock.iso(c.expiresAt))} (sandbox clock).</p>`;
  return htmlPage(status, `Checkout ${p.ref}`, head + stepSection(clock, p, ref) + sections.join('') + expires);
}

/** The step the payment waits in, as a form (or what to do). */
function stepSection(clock: SandboxClock, p: Payment, ref: string): string {
  const authorize = `/checkout/${ref}/authorize`;
  if (p.step === 'pin')
    return form(authorize, 'Enter the card PIN', codeField('PIN', 'pin', 4, 'off', ' type="password"'), 'Submit PIN');
  if (p.step === 'otp')
    return form(authorize, 'Enter the OTP sent to you', codeField('OTP', 'otp', 8, 'one-time-code'), 'Submit OTP');
  if (p.step === '3ds')
    return `<section><p>Complete the 3-D Secure challenge: <a href="/3ds/${ref}" id="auth-url">continue</a></p></section>`;
  if (p.step === 'bank-code') {
    const what =
      p.authModel === 'ValidateTOKEN'
        ? 'the 6-digit code from your token'
        : 'the OTP sent to the phone linked to the account';
    return form(`/checkout/${ref}/bank/validate`, `Enter ${what}`, codeField('Code', 'otp_token', 8, 'off'), 'Pay');
  }
  if (p.step === 'ussd' && p.ussd)
    return `<section><p>Dial <strong id="ussd-code">${escapeHtml(p.ussd.code)}</strong> before ${escapeHtml(clock.iso(p.ussd.expiresAt))}.</p></section>`;
  return '';
}

/** Each channel's form in the modal, in the order the modal shows them. */
const CHANNEL_FORMS: Record<(typeof CHANNELS)[number], (p: Payment, ref: string) => string> = {
  card: (_p, ref) =>
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
  bank: (_p, ref) =>
    form(
      `/checkout/${ref}/bank`,
      'Bank account',
      `<input type="hidden" name="bank_code" value="${PARTNER_BANK_CODE}"><label>Account number <input name="account_or_phoneno" inputmode="numeric" maxlength="13"></label>`,
      'Pay from bank account',
      'bank',
    ),
  ussd: (_p, ref) => {
    const options = USSD_BANK_CODES.map(
      (b) => `<option value="${b}"${b === PARTNER_BANK_CODE ? ' selected' : ''}>${b}</option>`,
    ).join('');
    return form(
      `/checkout/${ref}/ussd`,
      'USSD',
      `<label>Bank <select name="bank_code">${options}</select></label>`,
      'Get a USSD code',
      'ussd',
    );
  },
  transfer: (p, ref) => {
    const account = p.checkout!.dynamicAccount
      ? `<p>Transfer ${escapeHtml(formatAmount(p.amount, p.currency))} to <strong id="virtual-account-number">${escapeHtml(p.checkout!.dynamicAccount)}</strong> (Sandbox Partner Bank).</p>`
      : '';
    return `<section data-channel="transfer"><h2>Transfer</h2>${account}<form method="post" action="/checkout/${ref}/transfer"><button type="submit">Pay by transfer</button></form></section>`;
  },
};

/** Pays a checkout's dynamic account (A2). */
function simulateTransfer(store: PaymentStore, body: Record<string, unknown>): Reply {
  const account = String(body.virtual_account_number);
  const p = [...store.byRef.values()].find((x) => x.checkout?.dynamicAccount === account);
  if (!p) return fail(404, 'Virtual account not found');
  store.refresh(p);
  if (p.status !== 'Pending') return fail(400, `Checkout is ${p.status}`);
  const amount = positiveIntegerValue(body.amount);
  if (amount !== p.amount) return fail(400, `amount does not match the amount due (${p.amount})`);
  store.restartCheckout(p, 'Transfer');
  store.succeed(p);
  return ok('Payment successful');
}

export function registerCheckout(router: Router, store: PaymentStore, publicUrl: () => string): CheckoutApi {
  /** The modal's pages and channel calls: a form post with a bad field gets the modal back, showing the error. */
  const page: RouteFields = {
    params: PAGE,
    formError: (message, ctx) => answer(store, ctx, fail(400, message), store.get(ctx.params.ref)),
  };
  const deps: CheckoutDeps = { store, publicUrl };
  addRoutes(router, 'checkout', deps, [['POST', '/transaction/initiate', INITIATE_CHECKOUT_FIELDS, initiateCheckout]]);
  addRoutes(router, 'none', deps, [
    ['GET', '/checkout/{ref}', page, showModal],
    ['POST', '/checkout/{ref}/card', { ...page, body: CARD_FIELDS, rules: cardRules }, payByCard],
    ['POST', '/checkout/{ref}/authorize', { ...page, body: AUTHORIZE_BODY }, authorizeCheckoutCard],
    ['POST', '/checkout/{ref}/bank', { ...page, body: BANK_BODY, rules: bankRules }, payByBank],
    ['POST', '/checkout/{ref}/bank/validate', { ...page, body: z.object({ otp_token: CODE }) }, validateCheckoutBank],
    ['POST', '/checkout/{ref}/ussd', { ...page, body: USSD_BODY }, payByUssd],
    ['POST', '/checkout/{ref}/transfer', page, payByTransfer],
  ]);
  return {
    simulateTransfer: (body) => simulateTransfer(store, body),
    isDynamicAccount: (account) => [...store.byRef.values()].some((x) => x.checkout?.dynamicAccount === account),
  };
}

function form(action: string, title: string, fields: string, button: string, channel?: string): string {
  return `<section${channel ? ` data-channel="${channel}"` : ''}><h2>${escapeHtml(title)}</h2><form method="post" action="${action}">${fields}<button type="submit">${escapeHtml(button)}</button></form></section>`;
}

/** A field for a code the payer types (PIN, OTP, the bank's token or OTP). */
function codeField(label: string, name: string, maxLength: number, autocomplete: string, type = ''): string {
  return `<label>${label} <input name="${name}"${type} inputmode="numeric" maxlength="${maxLength}" autocomplete="${autocomplete}"></label>`;
}

function message(reply: Reply): string {
  return String(asObject(reply.body).message ?? 'Request refused');
}
