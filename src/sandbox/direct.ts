// Direct API (B): card (charge, B1; authorize with PIN/OTP, B2; 3DS challenge page), bank account
// debit (B3, with ValidateTOKEN or ValidateOTP; validate, B4), USSD (B5). Payer-side actions
// (dialling the USSD code, completing 3DS) are the 3DS page's form or admin calls.
import { z } from 'zod';
import { USSD_BANK_CODES } from '../api/schemas/direct';
import {
  addRoutes,
  asObject,
  escapeHtml,
  fail,
  formatAmount,
  htmlPage,
  ok,
  randomDigits,
  type Reply,
  type RequestContext,
  type RouteHandler,
  type Router,
} from './http';
import {
  cardFormatError,
  amountsFor,
  firstCardStep,
  SANDBOX_OTP,
  SANDBOX_PIN,
  STEP_LIFETIME_MS,
  TEST_CARDS,
  type Payment,
  type PaymentStore,
  type Step,
} from './payments';
import {
  asIs,
  CODE,
  identifier,
  matching,
  oneOf,
  pathParams,
  positiveInteger as positiveAmount,
  positiveIntegerValue,
  text,
  type RouteFields,
  type RuleBreak,
} from './validation';

/** Direct bank debits are described for one partner bank only. */
export const PARTNER_BANK_CODE = '058';
/** An account number (or phone) starting with this digit gets ValidateTOKEN; any other ValidateOTP. */
export const TOKEN_ACCOUNT_PREFIX = '1';
/** This account accepts the code, then the debit fails: 400 'Insufficient funds'. */
export const BANK_INSUFFICIENT_FUNDS_ACCOUNT = '0000000051';
/** The USSD bank codes: one list, the client's (the API layer's), so both accept the same codes. */
export { USSD_BANK_CODES };

/** A card as the direct charge and the checkout's card channel take it; whether it is a usable card is the handler's answer. */
export const CARD_FIELDS = z.object({ number: CODE, cvv: CODE, expiry_month: CODE, expiry_year: CODE });

const INITIATE_PAYMENT_FIELDS: RouteFields = {
  body: z.preprocess(
    (v) => withFlatNames(v as Record<string, unknown>),
    z
      .object({
        amount: positiveAmount('must be a positive integer in the lowest currency unit'),
        payment_method: oneOf(['card', 'bank', 'ussd'], 'must be card, bank or ussd'),
        customer: z.object({ name: text(), email: text() }),
        transaction_reference: identifier('must be alphanumeric').optional().or(z.literal('')),
        card: CARD_FIELDS.optional(),
        bank: z
          .object({
            bank_code: CODE,
            account_or_phoneno: matching(/^\d{10,13}$/, 'must be a 10-digit account number or a phone number'),
          })
          .optional(),
        ussd: z.object({ bank_code: oneOf(USSD_BANK_CODES, 'is not a supported USSD bank code') }).optional(),
      })
      .superRefine((b, ctx) => {
        const method = String(b.payment_method) as 'card' | 'bank' | 'ussd';
        if (b[method] === undefined) ctx.addIssue({ code: 'custom', ...asIs([method], 'is required') });
      }),
  ),
  // The spec's messages name the field itself (`cvv is required`), not its object.
  message: (field, rule) => `${field.replace(/^(customer|card|bank|ussd)\./, '')} ${rule}`,
  rules: ({ body }) => paymentRuleBreak(withFlatNames(body)),
};

/** The direct payment's rules that need no lookup: the currency per method, the card's own values, the partner bank. */
function paymentRuleBreak(body: Record<string, unknown>): RuleBreak | undefined {
  const currency = String(body.currency ?? 'NGN');
  const method = String(body.payment_method);
  if (method !== 'card' && currency !== 'NGN') return { message: 'currency must be NGN' };
  if (method === 'card' && !['NGN', 'USD'].includes(currency)) return { message: 'currency must be NGN or USD' };
  if (method === 'card') {
    const malformed = cardFormatError(asObject(body.card));
    return malformed ? { message: malformed } : undefined;
  }
  if (method === 'bank' && String(asObject(body.bank).bank_code) !== PARTNER_BANK_CODE)
    return { message: `Direct bank debit is only available for bank_code ${PARTNER_BANK_CODE}` };
  return undefined;
}

const AUTHORIZE_FIELDS: RouteFields = {
  body: z.object({
    transaction_reference: identifier(),
    authorization: z
      .object({ pin: CODE.optional(), otp: CODE.optional() })
      .refine((a) => a.pin !== undefined || a.otp !== undefined, asIs(['pin'], 'or authorization.otp is required')),
  }),
};

// The parameter table also lists otp_token as a top-level field: either place is accepted.
const VALIDATE_BANK_FIELDS: RouteFields = {
  body: z
    .object({
      transaction_reference: identifier(),
      authorization: z.object({ otp_token: CODE }).optional(),
      otp_token: CODE.optional(),
    })
    .refine((b) => b.authorization !== undefined || b.otp_token !== undefined, asIs(['authorization'], 'is required')),
  message: (field, rule) => `${field.replace(/^authorization\./, '')} ${rule}`,
};
const THREE_DS = pathParams('ref');

export interface DirectApi {
  /** The payer dials the USSD code (a direct USSD payment or the checkout's USSD channel). */
  payUssd(ref: string, phone?: string): Reply;
  /** The payer completes (or fails) the 3DS challenge. */
  finish3ds(ref: string, outcome: 'complete' | 'fail'): Reply;
}

export function stepResult(p: Payment, message: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: p.amount,
    transaction_ref: p.ref,
    currency: p.currency,
    transaction_type: p.type,
    gateway_ref: p.gatewayRef,
    merchant_amount: p.merchantAmount,
    message,
    ...extra,
  };
}

/** A pending card payment's status by the step it waits in, and the charge's message for that step. */
const CARD_STEPS: Partial<Record<Step, { status: string; message: string }>> = {
  pin: { status: 'ValidatePin', message: 'Charge attempted: enter the card PIN' },
  otp: { status: 'ValidateOTP', message: 'Charge attempted: enter the OTP sent to the card holder' },
  '3ds': { status: 'ThreeDSecure', message: 'Complete the 3DS challenge at auth_url' },
};

export const cardStatus = (p: Payment): string =>
  p.status !== 'Pending' ? p.status : ((p.step && CARD_STEPS[p.step]?.status) ?? 'Pending');

/**
 * The bank debit's parameter table also lists flat names (`email`, `name`, `bank_code`, `account_or_phone`) next
 * to the nested `customer` and `bank` objects: a body that uses them is read as the nested form
 * (the nested form wins when both are sent).
 */
function withFlatNames(body: Record<string, unknown>): Record<string, unknown> {
  const out = { ...body };
  if (out.customer === undefined && (body.email !== undefined || body.name !== undefined))
    out.customer = { name: body.name, email: body.email };
  if (
    out.bank === undefined &&
    out.payment_method === 'bank' &&
    (body.bank_code !== undefined || body.account_or_phone !== undefined || body.account_or_phoneno !== undefined)
  ) {
    out.bank = { bank_code: body.bank_code, account_or_phoneno: body.account_or_phoneno ?? body.account_or_phone };
  }
  return out;
}

/** Why an authorize/validate call cannot go on, or undefined. */
function notOpen(p: Payment): Reply | undefined {
  if (p.status === 'Success') return fail(400, 'Transaction has already been completed');
  if (p.status === 'Abandoned' || p.failureReason === 'step expired' || p.failureReason === 'USSD code expired')
    return fail(400, 'Transaction has expired');
  if (p.status === 'Failed') return fail(400, 'Transaction has failed');
  return undefined;
}

/** What the direct API's handlers work with. */
interface DirectDeps {
  store: PaymentStore;
  /** The 3DS challenge page of a payment (the charge's auth_url). */
  authUrl: (ref: string) => string;
}

/** The fields every direct payment starts with, whatever its method. */
type PaymentBase = Omit<Parameters<PaymentStore['create']>[0], 'type'>;

/** One path, three payment methods (B1, B3, B5). */
function initiatePayment({ store, authUrl }: DirectDeps, { body: sent, secretKey }: RequestContext): Reply {
  const body = withFlatNames(sent);
  const amount = positiveIntegerValue(body.amount)!;
  const customer = asObject(body.customer);
  const ref = store.refFor(body.transaction_reference);
  if (store.byRef.has(ref)) return fail(400, 'Duplicate transaction reference');
  const base: PaymentBase = {
    ref,
    origin: 'direct',
    ...amountsFor(amount, body.pass_charge === true),
    currency: String(body.currency ?? 'NGN'),
    email: String(customer.email),
    customerName: String(customer.name),
    key: secretKey,
    redirectUrl: typeof body.redirect_url === 'string' ? body.redirect_url : undefined,
    webhookUrl: typeof body.webhook_url === 'string' ? body.webhook_url : undefined,
  };
  const method = String(body.payment_method);
  if (method === 'card') return chargeCard(store, base, asObject(body.card), amount, authUrl(ref));
  if (method === 'bank') return debitBank(store, base, asObject(body.bank));
  return generateUssdCode(store, base, String(asObject(body.ussd).bank_code));
}

/** The card's first step (B1): PIN, OTP or 3DS, by test card. */
function chargeCard(
  store: PaymentStore,
  base: PaymentBase,
  card: Record<string, unknown>,
  amount: number,
  authUrl: string,
): Reply {
  const first = firstCardStep(card, amount, store.clock.now());
  if ('error' in first) {
    // A declined card leaves a Failed transaction behind (verify shows it); a malformed one leaves nothing.
    if (first.decline) store.finish(store.create({ ...base, type: 'Card' }), 'Failed', first.error);
    return fail(400, first.error);
  }
  const p = store.create({ ...base, type: 'Card', card: { pan: first.pan, expiry: first.expiry } });
  store.setStep(p, first.step);
  return ok(
    stepResult(p, CARD_STEPS[first.step]!.message, {
      transaction_status: cardStatus(p),
      ...(first.step === '3ds' ? { auth_url: authUrl } : {}),
    }),
  );
}

/** The bank debit (B3): the account's first digit picks a token or an OTP. */
function debitBank(store: PaymentStore, base: PaymentBase, bank: Record<string, unknown>): Reply {
  const p = store.create({ ...base, type: 'Bank' });
  awaitBankCode(store, p, { account: String(bank.account_or_phoneno), bankCode: String(bank.bank_code) });
  const message =
    p.authModel === 'ValidateTOKEN'
      ? 'Enter the 6-digit code from your token or e-token'
      : 'Enter the OTP sent to the phone linked to the account';
  return ok(stepResult(p, message, { auth_model: p.authModel, transaction_status: 'Pending' }));
}

/** A bank debit (direct or the checkout's bank channel) waits for the bank's code: a token or an OTP, by account. */
export function awaitBankCode(store: PaymentStore, p: Payment, bank: { account: string; bankCode: string }): void {
  p.bank = bank;
  p.authModel = bank.account.startsWith(TOKEN_ACCOUNT_PREFIX) ? 'ValidateTOKEN' : 'ValidateOTP';
  store.setStep(p, 'bank-code');
}

/**
 * The code a payer dials, `*<bank code>*000*<six digits>#`: the one form the USSD payment (B5) and the
 * checkout's USSD channel both issue. The spec shows only "USSD code string", so the six digits are any
 * six, a leading 0 included (the code is a string, never read as a number).
 */
export const ussdCode = (bankCode: string): string => `*${bankCode}*000*${randomDigits(6)}#`;

/** The USSD payment (B5): a code for the payer to dial before it expires. */
function generateUssdCode(store: PaymentStore, base: PaymentBase, bankCode: string): Reply {
  const expiresAt = store.clock.now() + STEP_LIFETIME_MS;
  const code = ussdCode(bankCode);
  const p = store.create({ ...base, type: 'Ussd', ussd: { code, bankCode, expiresAt } });
  store.setStep(p, 'ussd');
  return ok(
    stepResult(p, 'USSD Payment Reference Generated', {
      auth_model: 'USSDCodeGenerated',
      transaction_status: 'Pending',
      ussd_details: { ussd_reference: code, expiresAt: store.clock.iso(expiresAt) },
    }),
    'USSD Payment Reference Generated',
  );
}

/** The open direct payment of this type that an authorize or validate call names, or the reply refusing it. */
function openDirectPayment(store: PaymentStore, ref: unknown, type: Payment['type']): Payment | Reply {
  const p = store.get(String(ref));
  if (!p || p.type !== type || p.origin !== 'direct') return fail(400, 'Transaction not found');
  return notOpen(p) ?? p;
}

/** Authorize (B2): PIN then OTP. */
function authorize({ store }: DirectDeps, { body }: RequestContext): Reply {
  const p = openDirectPayment(store, body.transaction_reference, 'Card');
  return 'ref' in p ? authorizeCard(store, p, asObject(body.authorization)) : p;
}

/** Validate the bank payment (B4): the bank's token or OTP, in `authorization` or at the top level. */
function validateBank({ store }: DirectDeps, { body }: RequestContext): Reply {
  const auth = body.authorization !== undefined ? asObject(body.authorization) : { otp_token: body.otp_token };
  const p = openDirectPayment(store, body.transaction_reference, 'Bank');
  return 'ref' in p ? validateBankCode(store, p, String(auth.otp_token)) : p;
}

/** The 3DS challenge page (auth_url). */
function challengePage({ store }: DirectDeps, { params }: RequestContext): Reply {
  const p = store.get(params.ref);
  if (!p || !p.card) return htmlPage(404, '3-D Secure', '<p class="error">No such transaction.</p>');
  if (p.step !== '3ds')
    return htmlPage(
      p.status === 'Success' ? 200 : 410,
      '3-D Secure',
      `<p id="status">Transaction ${escapeHtml(p.ref)}: ${escapeHtml(cardStatus(p))}</p>`,
    );
  const action = `/3ds/${encodeURIComponent(p.ref)}`;
  return htmlPage(
    200,
    '3-D Secure',
    `<p>Sandbox issuer challenge for card ${escapeHtml(p.card.pan.slice(-4).padStart(8, '•'))}, ${escapeHtml(formatAmount(p.amount, p.currency))}.</p>` +
      `<form method="post" action="${action}/complete"><button type="submit" id="complete">Complete authentication</button></form>` +
      `<form method="post" action="${action}/fail"><button type="submit" id="fail">Fail authentication</button></form>`,
  );
}

function finish3ds(store: PaymentStore, ref: string, outcome: 'complete' | 'fail'): Reply {
  const p = store.get(ref);
  if (!p || p.step !== '3ds' || p.status !== 'Pending')
    return htmlPage(404, '3-D Secure', '<p class="error">No challenge pending for this transaction.</p>');
  if (outcome === 'fail') {
    store.failAttempt(p, '3DS authentication failed');
    return htmlPage(200, '3-D Secure', '<p id="result">Authentication failed.</p>');
  }
  store.succeed(p);
  return afterPayment(p.ref, p.redirectUrl ?? p.checkout?.callbackUrl, 302);
}

/**
 * A paid payment's page: the redirect back to the merchant with the reference (E-3; the parameter's
 * name is our choice: reference), or a success page when there is nowhere to go back to.
 */
export function afterPayment(ref: string, back: string | undefined, status: 302 | 303): Reply {
  if (back) return { status, location: withReference(back, ref) };
  return htmlPage(200, 'Payment successful', `<p id="result">Payment ${escapeHtml(ref)} successful.</p>`);
}

function payUssd(store: PaymentStore, ref: string, phone = '08030000000'): Reply {
  const p = store.get(ref);
  if (!p || p.type !== 'Ussd' || p.status !== 'Pending' || p.step !== 'ussd')
    return fail(400, 'No USSD payment pending for that reference');
  p.customerMobile = `${phone.slice(0, 4)}****${phone.slice(-3)}`;
  store.succeed(p);
  return ok({ paid: true, transaction_ref: p.ref });
}

const complete3ds: RouteHandler<DirectDeps> = ({ store }, { params }) => finish3ds(store, params.ref, 'complete');
const fail3ds: RouteHandler<DirectDeps> = ({ store }, { params }) => finish3ds(store, params.ref, 'fail');

export function registerDirect(router: Router, store: PaymentStore, publicUrl: () => string): DirectApi {
  const authUrl = (ref: string) => `${publicUrl()}/3ds/${encodeURIComponent(ref)}`;
  const deps: DirectDeps = { store, authUrl };
  addRoutes(router, 'direct', deps, [
    ['POST', '/transaction/initiate/process-payment', INITIATE_PAYMENT_FIELDS, initiatePayment],
    ['POST', '/transaction/payment/authorize', AUTHORIZE_FIELDS, authorize],
    ['POST', '/transaction/validate-payment', VALIDATE_BANK_FIELDS, validateBank],
  ]);
  // The 3DS challenge page and its buttons: the sandbox's own pages.
  addRoutes(router, 'none', deps, [
    ['GET', '/3ds/{ref}', { params: THREE_DS }, challengePage],
    ['POST', '/3ds/{ref}/complete', { params: THREE_DS }, complete3ds],
    ['POST', '/3ds/{ref}/fail', { params: THREE_DS }, fail3ds],
  ]);
  return {
    payUssd: (ref, phone) => payUssd(store, ref, phone),
    finish3ds: (ref, outcome) => finish3ds(store, ref, outcome),
  };
}

/** The authorize logic, shared with the checkout's card channel. */
export function authorizeCard(store: PaymentStore, p: Payment, auth: Record<string, unknown>): Reply {
  const pin = auth.pin;
  const otp = auth.otp;
  if (p.step === 'pin') {
    if (pin === undefined || pin === null || pin === '') return fail(400, 'pin is required');
    if (String(pin) !== SANDBOX_PIN) return wrong(store, p, 'Invalid PIN');
    store.setStep(p, 'otp');
    return ok(
      stepResult(p, 'PIN accepted: enter the OTP sent to the card holder', { transaction_status: 'ValidateOTP' }),
      'PIN accepted',
    );
  }
  if (p.step === 'otp') {
    if (otp === undefined || otp === null || otp === '') return fail(400, 'otp is required');
    if (String(otp) !== SANDBOX_OTP) return wrong(store, p, 'Invalid OTP');
    if (p.card?.pan === TEST_CARDS.insufficientFunds) {
      store.failAttempt(p, 'Insufficient funds');
      return fail(400, 'Insufficient funds');
    }
    store.succeed(p);
    return ok(stepResult(p, 'Validate OTP Successful.', { transaction_status: 'Success' }), 'Validate OTP Successful.');
  }
  if (p.step === '3ds') return fail(400, 'Transaction requires 3DS authentication at auth_url');
  return fail(400, 'Transaction is not awaiting a PIN or OTP');
}

/** The bank validation logic, shared with the checkout's bank channel. */
export function validateBankCode(store: PaymentStore, p: Payment, code: string): Reply {
  if (p.step !== 'bank-code') return fail(400, 'Transaction is not awaiting a token or OTP');
  if (code !== SANDBOX_OTP) return wrong(store, p, 'Invalid OTP or token');
  const model = p.authModel;
  if (p.bank?.account === BANK_INSUFFICIENT_FUNDS_ACCOUNT) {
    store.failAttempt(p, 'Insufficient funds');
    return fail(400, 'Insufficient funds');
  }
  store.succeed(p);
  return ok(
    stepResult(p, 'Charge attempted', { auth_model: model, transaction_status: 'Success' }),
    'Charge attempted',
  );
}

function wrong(store: PaymentStore, p: Payment, message: string): Reply {
  const ended = store.wrongTry(p);
  return fail(
    400,
    ended
      ? `${message}: too many wrong attempts, the ${p.checkout ? 'attempt was abandoned' : 'transaction has failed'}`
      : message,
  );
}

function withReference(url: string, ref: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}reference=${encodeURIComponent(ref)}`;
}
