// The payment store shared by hosted checkout (A1/A2), direct payments (B1-B5), token charges
// (A4) and the transaction queries (A6, verify): one record per transaction reference, its
// step and expiry on the sandbox clock, and what happens on success (ledger, tokenisation, the payment webhook).
import type { SandboxClock } from './clock';
import type { Ledger, LedgerKind } from './ledger';
import { MERCHANT_EMAIL, MERCHANT_ID, MERCHANT_NAME, randomDigits } from './http';
import type { WebhookDispatcher } from './webhooks';

export const SANDBOX_PIN = '1234';
export const SANDBOX_OTP = '123456';
/** Each direct step (PIN, OTP, 3DS, bank code, USSD code) lives this long on the sandbox clock. */
export const STEP_LIFETIME_MS = 10 * 60 * 1000;
/** An unpaid hosted checkout is Abandoned after this long on the sandbox clock. */
export const CHECKOUT_LIFETIME_MS = 30 * 60 * 1000;
/** The third wrong PIN/OTP/code fails a direct payment (a checkout's card attempt starts over). */
export const MAX_WRONG_TRIES = 3;
/** Below this amount (kobo) the OTP-only card asks for the OTP only (spec: below 7,500 NGN). */
export const OTP_ONLY_LIMIT = 750_000;

export const TEST_CARDS = {
  /** ValidateOTP below 750000 kobo; at or above, ValidatePin first, then ValidateOTP. */
  otpOnly: '4242424242424242',
  /** ThreeDSecure: auth_url is the sandbox's challenge page. */
  threeDs: '5200000000001096',
  /** ValidatePin, then ValidateOTP. */
  pinThenOtp: '5555555555554444',
  /** Declined at once: 400 'Card declined'. */
  declined: '4000000000000002',
  /** ValidateOTP; the right OTP then gets 400 'Insufficient funds' and the payment fails. */
  insufficientFunds: '4000000000009995',
} as const;

/**
 * Charges the sandbox applies (its own tariff, not the real one): 1.2 % of the amount, rounded
 * to the kobo, capped at 200000 kobo. With pass_charge the payer pays amount + fee and the
 * merchant gets the amount; without it the payer pays the amount and the merchant gets amount - fee.
 */
export function chargeFor(amount: number): number {
  return Math.min(Math.round(amount * 0.012), 200_000);
}

/** A payment's amounts by that rule: who pays the fee follows pass_charge. */
export function amountsFor(
  amount: number,
  passCharge: boolean,
): { amount: number; merchantAmount: number; fee: number } {
  const fee = chargeFor(amount);
  return passCharge
    ? { amount: amount + fee, merchantAmount: amount, fee }
    : { amount, merchantAmount: amount - fee, fee };
}

export type PaymentStatus = 'Pending' | 'Success' | 'Failed' | 'Abandoned';
/** Where a pending payment waits. 'choose': an open checkout where no channel was started. */
export type Step = 'choose' | 'pin' | 'otp' | '3ds' | 'bank-code' | 'ussd' | 'transfer';
export type TransactionType = 'Card' | 'Bank' | 'Ussd' | 'Transfer';

export interface Payment {
  id: number;
  ref: string;
  origin: 'direct' | 'checkout' | 'token';
  type: TransactionType;
  /** What the payer pays (lowest unit), including the fee when pass_charge is true. */
  amount: number;
  /** What the merchant gets. */
  merchantAmount: number;
  fee: number;
  currency: string;
  email: string;
  customerName: string | null;
  meta: Record<string, unknown>;
  status: PaymentStatus;
  step?: Step;
  stepExpiresAt?: number;
  /** Bank debits: ValidateTOKEN or ValidateOTP. */
  authModel?: 'ValidateTOKEN' | 'ValidateOTP';
  wrongTries: number;
  card?: { pan: string; expiry: string };
  tokenId?: string;
  isRecurring: boolean;
  checkout?: {
    channels: string[];
    callbackUrl?: string;
    expiresAt: number;
    dynamicAccount?: string;
    passCharge: boolean;
  };
  ussd?: { code: string; bankCode: string; expiresAt: number };
  bank?: { account: string; bankCode: string };
  customerMobile?: string;
  redirectUrl?: string;
  /** The request's webhook_url; the dashboard URL (SandboxOptions.webhookUrl) overrides it. */
  webhookUrl?: string;
  gatewayRef: string;
  /** The secret key that made the payment: it signs the payment webhook. */
  key: string;
  createdAt: number;
  updatedAt: number;
  failureReason?: string;
}

/**
 * A payment as the tokenised-card charge result (A4) lists it. Verify (docs/choices.md) answers these
 * fields and a few more: one home, so the two always agree.
 */
export const chargeResult = (p: Payment, clock: SandboxClock): Record<string, unknown> => ({
  transaction_amount: p.amount,
  transaction_ref: p.ref,
  email: p.email,
  transaction_status: p.status,
  transaction_currency_id: p.currency,
  created_at: clock.iso(p.createdAt),
  transaction_type: p.type,
  merchant_name: MERCHANT_NAME,
  merchant_business_name: MERCHANT_NAME,
  gateway_transaction_ref: p.gatewayRef,
  recurring: null,
  merchant_email: MERCHANT_EMAIL,
  plan_code: null,
});

export interface Token {
  id: string;
  active: boolean;
  email: string;
  currency: string;
  pan: string;
  expiry: string;
  /** The checkout payment that created it. */
  firstRef: string;
}

export const cardType = (pan: string): string =>
  pan.startsWith('4')
    ? 'visa'
    : /^(5[1-5]|2[2-7])/.test(pan)
      ? 'mastercard'
      : /^(506|507|650)/.test(pan)
        ? 'verve'
        : 'card';

export const maskPan = (pan: string): string => `${pan.slice(0, 6)}******${pan.slice(-4)}`;

export function luhn(pan: string): boolean {
  let sum = 0;
  for (let i = 0; i < pan.length; i++) {
    let d = Number(pan[pan.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * What is wrong with a card's own values (number, cvv, expiry format), or undefined: a rule that
 * needs no lookup, so the direct charge and the checkout's card channel check it before anything else.
 */
export function cardFormatError(card: Record<string, unknown>): string | undefined {
  for (const f of ['number', 'cvv', 'expiry_month', 'expiry_year']) {
    if (card[f] === undefined || card[f] === null) return `${f} is required`;
    if (card[f] === '') return `${f} is not allowed to be empty`;
  }
  const pan = String(card.number).replace(/\s+/g, '');
  if (!/^\d{12,19}$/.test(pan) || !luhn(pan)) return 'Invalid card number';
  if (!/^\d{3,4}$/.test(String(card.cvv))) return 'Invalid cvv';
  const month = String(card.expiry_month).padStart(2, '0');
  if (!/^(0[1-9]|1[0-2])$/.test(month) || !/^\d{2}$/.test(String(card.expiry_year))) return 'Invalid card expiry date';
  return undefined;
}

/**
 * Checks the card fields and picks the first step by test card. Returns an error message for a
 * refused card, or the step to wait in.
 */
export function firstCardStep(
  card: Record<string, unknown>,
  amount: number,
  now: number,
): { error: string; decline?: boolean } | { step: 'pin' | 'otp' | '3ds'; pan: string; expiry: string } {
  const malformed = cardFormatError(card);
  if (malformed) return { error: malformed };
  const pan = String(card.number).replace(/\s+/g, '');
  const month = String(card.expiry_month).padStart(2, '0');
  const year = String(card.expiry_year);
  const today = new Date(now);
  const expiryEnd = Date.UTC(2000 + Number(year), Number(month), 1); // first day of the month after expiry
  if (expiryEnd <= Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()))
    return { error: 'Card expired', decline: true };
  const expiry = `${month}/${year}`;
  switch (pan) {
    case TEST_CARDS.declined:
      return { error: 'Card declined', decline: true };
    case TEST_CARDS.threeDs:
      return { step: '3ds', pan, expiry };
    case TEST_CARDS.pinThenOtp:
      return { step: 'pin', pan, expiry };
    case TEST_CARDS.otpOnly:
      return { step: amount < OTP_ONLY_LIMIT ? 'otp' : 'pin', pan, expiry };
    case TEST_CARDS.insufficientFunds:
      return { step: 'otp', pan, expiry };
    default:
      return { error: 'Card not supported in the sandbox: use one of the test cards (docs/sandbox.md)' };
  }
}

/** A successful payment's ledger entry: by origin, a direct payment's by its type (USSD otherwise). */
const ORIGIN_LEDGER_KINDS: Record<'checkout' | 'token', LedgerKind> = { checkout: 'checkout', token: 'token_charge' };
const DIRECT_LEDGER_KINDS: Partial<Record<TransactionType, LedgerKind>> = { Card: 'card_charge', Bank: 'bank_debit' };

export interface PaymentsDeps {
  clock: SandboxClock;
  ledger: Ledger;
  webhooks: WebhookDispatcher;
  /** The merchant account's dashboard webhook URL (by secret key); overrides a request's webhook_url. */
  webhookUrlFor(key: string): string | undefined;
}

/** What the store sets on a new payment, and what it defaults. */
type Generated = 'id' | 'createdAt' | 'updatedAt' | 'wrongTries' | 'gatewayRef';
type Defaulted = 'status' | 'meta' | 'isRecurring';

export class PaymentStore {
  readonly byRef = new Map<string, Payment>();
  readonly tokens = new Map<string, Token>();
  private seq = 0;

  constructor(private readonly deps: PaymentsDeps) {}

  get clock(): SandboxClock {
    return this.deps.clock;
  }

  newRef(): string {
    return `SBX${randomDigits(14)}`;
  }

  /** The caller's transaction reference, or a new one when it gave none. */
  refFor(given: unknown): string {
    return given === undefined || given === '' ? this.newRef() : String(given);
  }

  /** A new payment: Pending, without meta and not recurring, unless `init` says otherwise. */
  create(init: Omit<Payment, Generated | Defaulted> & Partial<Pick<Payment, Defaulted>>): Payment {
    const now = this.deps.clock.now();
    const p: Payment = {
      meta: {},
      isRecurring: false,
      ...init,
      status: init.status ?? 'Pending',
      id: ++this.seq,
      createdAt: now,
      updatedAt: now,
      wrongTries: 0,
      gatewayRef: `${init.ref}_${randomDigits(6)}`,
    };
    this.byRef.set(p.ref, p);
    return p;
  }

  /** The payment, with expiry applied. */
  get(ref: string): Payment | undefined {
    const p = this.byRef.get(ref);
    if (p) this.refresh(p);
    return p;
  }

  all(): Payment[] {
    const rows = [...this.byRef.values()];
    rows.forEach((p) => this.refresh(p));
    return rows;
  }

  /** Applies the sandbox clock: expired steps fail (USSD: Abandoned), expired checkouts are Abandoned. */
  refresh(p: Payment): void {
    if (p.status !== 'Pending') return;
    const now = this.deps.clock.now();
    if (p.checkout) {
      if (now > p.checkout.expiresAt) {
        this.finish(p, 'Abandoned', 'checkout expired');
        return;
      }
      // A started channel that outlived its step goes back to the choice of channels.
      if (
        p.step &&
        p.step !== 'choose' &&
        p.step !== 'transfer' &&
        p.step !== 'ussd' &&
        p.stepExpiresAt !== undefined &&
        now > p.stepExpiresAt
      )
        this.restartCheckout(p);
      return;
    }
    if (p.stepExpiresAt !== undefined && now > p.stepExpiresAt) {
      this.finish(
        p,
        p.step === 'ussd' ? 'Abandoned' : 'Failed',
        p.step === 'ussd' ? 'USSD code expired' : 'step expired',
      );
    }
  }

  /**
   * A checkout goes back to 'choose' (card attempt abandoned or failed; the modal can be used again),
   * or to the start of a channel of this type.
   */
  restartCheckout(p: Payment, type: TransactionType = 'Card'): void {
    p.step = 'choose';
    p.type = type;
    p.card = undefined;
    p.bank = undefined;
    p.authModel = undefined;
    p.wrongTries = 0;
    p.stepExpiresAt = undefined;
    p.updatedAt = this.deps.clock.now();
  }

  setStep(p: Payment, step: Step, lifetimeMs = STEP_LIFETIME_MS): void {
    p.step = step;
    p.wrongTries = 0;
    p.stepExpiresAt = this.deps.clock.now() + lifetimeMs;
    p.updatedAt = this.deps.clock.now();
  }

  /** A wrong PIN/OTP/code: the third fails a direct payment, or restarts a checkout's attempt. Returns true when that happened. */
  wrongTry(p: Payment): boolean {
    p.wrongTries += 1;
    if (p.wrongTries < MAX_WRONG_TRIES) return false;
    this.failAttempt(p, 'too many wrong attempts');
    return true;
  }

  /** The attempt failed: a checkout's attempt starts over (the modal can be used again); a direct payment fails. */
  failAttempt(p: Payment, reason: string): void {
    if (p.checkout) this.restartCheckout(p);
    else this.finish(p, 'Failed', reason);
  }

  finish(p: Payment, status: 'Failed' | 'Abandoned', reason: string): void {
    p.status = status;
    p.failureReason = reason;
    p.step = undefined;
    p.updatedAt = this.deps.clock.now();
  }

  /** The payment succeeded: ledger entry, token for a recurring checkout paid by card, the payment webhook. */
  succeed(p: Payment): void {
    const now = this.deps.clock.now();
    p.status = 'Success';
    p.step = undefined;
    p.updatedAt = now;
    const kind = p.origin === 'direct' ? (DIRECT_LEDGER_KINDS[p.type] ?? 'ussd') : ORIGIN_LEDGER_KINDS[p.origin];
    this.deps.ledger.record(kind, p.ref, p.amount, p.currency);
    if (p.checkout && p.isRecurring && p.card && !p.tokenId) {
      p.tokenId = `AUTH_${randomDigits(12)}`;
      this.tokens.set(p.tokenId, {
        id: p.tokenId,
        active: true,
        email: p.email,
        currency: p.currency,
        pan: p.card.pan,
        expiry: p.card.expiry,
        firstRef: p.ref,
      });
    }
    const url = this.deps.webhookUrlFor(p.key) ?? p.webhookUrl;
    if (url) this.deps.webhooks.sendPayment(url, p.ref, this.paymentWebhook(p), p.key);
  }

  /** The payment webhook's body (spec, Events, E-1). */
  paymentWebhook(p: Payment): Record<string, unknown> {
    let paymentInformation: Record<string, unknown>;
    if (p.card) {
      paymentInformation = {
        payment_type: 'card',
        pan: `${maskPan(p.card.pan)}|${p.card.expiry}`,
        card_type: cardType(p.card.pan),
        ...(p.tokenId ? { token_id: p.tokenId } : {}),
      };
    } else if (p.type === 'Ussd') {
      paymentInformation = { payment_type: 'ussd', customer_ref: p.ussd?.code ?? null };
    } else if (p.type === 'Bank') {
      paymentInformation = {
        payment_type: 'bank',
        account_number: p.bank ? `${p.bank.account.slice(0, 3)}****${p.bank.account.slice(-3)}` : null,
        bank_code: p.bank?.bankCode ?? null,
      };
    } else {
      paymentInformation = { payment_type: 'transfer' };
    }
    return {
      Event: 'charge_successful',
      TransactionRef: p.ref,
      Body: {
        amount: p.amount,
        transaction_ref: p.ref,
        gateway_ref: p.gatewayRef,
        transaction_status: 'Success',
        email: p.email,
        merchant_id: MERCHANT_ID,
        currency: p.currency,
        transaction_type: p.type,
        merchant_amount: p.merchantAmount,
        created_at: this.deps.clock.iso(p.createdAt),
        ...(p.type === 'Ussd' && p.customerMobile ? { customer_mobile: p.customerMobile } : {}),
        meta: p.meta,
        payment_information: paymentInformation,
        is_recurring: p.isRecurring,
      },
    };
  }
}
