// Virtual accounts (C): B2C (C1) and B2B (C2) accounts, their transactions (C3-C5), lookups
// (C6-C8), the simulated credit (C9) with its signed notification (E-2), and the webhook error
// log of unacknowledged notifications (C10, C11). The simulated credit's path also serves the checkout's simulated transfer (A2, "dva": true).
import { randomUUID } from 'node:crypto';
import type { CheckoutApi } from './checkout';
import type { SandboxClock } from './clock';
import { z } from 'zod';
import { DYNAMIC_ACCOUNT_PREFIX } from './checkout';
import {
  addRoutes,
  fail,
  ok,
  page,
  randomDigits,
  type Reply,
  type RequestContext,
  type RouteHandler,
  type Router,
} from './http';
import type { Ledger } from './ledger';
import { WebhookDispatcher } from './webhooks';
import {
  asIs,
  identifier,
  matching,
  oneOf,
  PAGING,
  pathParams,
  positiveIntegerValue,
  rule,
  text,
  type RouteFields,
} from './validation';

/** Settlement accounts that exist at the partner bank; any other beneficiary_account gets the business account's 424. */
export const PARTNER_BANK_ACCOUNTS = ['0123456789', '1234567890'];
/** A BVN whose details never match: account creation refuses it and no account is created. */
export const MISMATCHED_BVN = '22200000000';
/** Virtual accounts get numbers starting with this digit. */
export const VIRTUAL_ACCOUNT_PREFIX = '4';
/** A simulated credit without an amount credits this. */
export const DEFAULT_SIMULATED_AMOUNT = '1000.00';
const MIN_TIMESTAMP = '0001-01-01T00:00:00.000Z';

const TEN_DIGITS = /^\d{10}$/;
const ACCOUNT_FIELDS = {
  mobile_num: matching(/^\d{1,11}$/, 'must be at most 11 digits'),
  bvn: matching(/^\d{11}$/, 'must be 11 digits'),
  beneficiary_account: matching(TEN_DIGITS, 'must be 10 digits').nullish(),
};
const CREATE_CUSTOMER_ACCOUNT_FIELDS: RouteFields = {
  body: z.object({
    customer_identifier: text(),
    first_name: text(),
    last_name: text(),
    ...ACCOUNT_FIELDS,
    dob: matching(/^(0[1-9]|1[0-2])\/(0[1-9]|[12]\d|3[01])\/\d{4}$/, 'must be in the format mm/dd/yyyy'),
    gender: oneOf(['1', '2'], "must be '1' (male) or '2' (female)"),
    address: text(),
  }),
  // As the spec shows the customer account's message for this field.
  message: (field, rule) =>
    field === 'customer_identifier' && /^is /.test(rule)
      ? 'Validation Failure, Customer identifier is required'
      : `${field} ${rule}`,
};
const CREATE_BUSINESS_ACCOUNT_FIELDS: RouteFields = {
  body: z.object({
    bvn: ACCOUNT_FIELDS.bvn,
    business_name: text(),
    customer_identifier: matching(/^[A-Za-z0-9]+$/, 'must be alphanumeric'),
    mobile_num: ACCOUNT_FIELDS.mobile_num,
    beneficiary_account: ACCOUNT_FIELDS.beneficiary_account,
  }),
};
const mdy = matching(/^\d{2}-\d{2}-\d{4}$/, 'must be in the format MM-DD-YYYY').refine(
  (v) => parseMdy(String(v)) !== undefined,
  'must be in the format MM-DD-YYYY',
);
/** The filtered search's messages quote the field, as the spec shows them ('"virtualAccount" is not allowed to be empty'). */
const SEARCH_CREDITS_FIELDS: RouteFields = {
  query: z.object({
    virtualAccount: matching(TEN_DIGITS, 'must be 10 digits').optional(),
    customerIdentifier: identifier().optional(),
    transactionReference: identifier().optional(),
    session_id: identifier().optional(),
    startDate: mdy.optional(),
    endDate: mdy.optional(),
    ...PAGING,
    dir: oneOf(['ASC', 'DESC'], 'must be one of [ASC, DESC]').optional(),
  }),
  message: (field, rule) => `"${field}" ${rule}`,
};
const ymd = rule(
  (v) => typeof v === 'string' && parseYmd(v) !== undefined,
  'must be in the format YY-MM-DD',
).optional();
const LIST_ACCOUNTS_FIELDS: RouteFields = {
  query: z.object({ ...PAGING, startDate: ymd, EndDate: ymd, endDate: ymd }),
  message: (field, rule) => `"${field}" ${rule}`,
};
const WEBHOOK_LOGS_FIELDS: RouteFields = { query: z.object(PAGING) };
/**
 * The simulated credit (C9) and transfer (A2) share a path: the transfer (`dva: true`, or a checkout's dynamic account, numbered '99…') pays the
 * amount due in kobo; the credit credits a decimal string, 1000.00 when absent.
 */
const SIMULATE_PAYMENT_FIELDS: RouteFields = {
  body: z
    .object({
      virtual_account_number: matching(TEN_DIGITS, 'must be 10 digits'),
      amount: z.unknown().optional(),
      dva: z.unknown().optional(),
    })
    .superRefine((b, ctx) => {
      const checkoutTransfer =
        b.dva === true || b.dva === 'true' || String(b.virtual_account_number).startsWith(DYNAMIC_ACCOUNT_PREFIX);
      if (checkoutTransfer && (b.amount === undefined || b.amount === null || b.amount === ''))
        ctx.addIssue({ code: 'custom', path: ['amount'], message: 'is required' });
      else if (checkoutTransfer && positiveIntegerValue(b.amount) === undefined)
        ctx.addIssue({ code: 'custom', ...asIs(['amount'], 'must be a positive integer in the lowest currency unit') });
      else if (
        !checkoutTransfer &&
        b.amount !== undefined &&
        b.amount !== null &&
        b.amount !== '' &&
        !decimalAmount(b.amount)
      )
        ctx.addIssue({ code: 'custom', ...asIs(['amount'], 'must be a positive decimal string such as "1000.00"') });
    }),
};
const decimalAmount = (v: unknown) => /^\d+(\.\d{1,2})?$/.test(String(v)) && Number(v) > 0;

interface Account {
  first_name: string;
  last_name: string;
  bank_code: string;
  virtual_account_number: string;
  beneficiary_account: string | null;
  customer_identifier: string;
  mobile_num: string;
  email: string | null;
  created_at: string;
  updated_at: string;
}

interface Credit {
  /** The previous-format reference: what the transaction lists show and requery by. */
  transaction_reference: string;
  /** What the notification carried (differs for version 3). */
  notified_reference: string;
  session_id: string;
  virtual_account_number: string;
  principal_amount: string;
  settled_amount: string;
  fee_charged: string;
  transaction_date: string;
  transaction_indicator: 'C';
  remarks: string;
  currency: string;
  /** Set when the service holds the funds (sandbox: admin freeze-next); null once released. */
  frozen_transaction: { freeze_transaction_ref: string; reason: string } | null;
  customer: { customer_identifier: string };
}

export interface VirtualAccountOptions {
  /** The merchant account's dashboard webhook URL (by secret key). */
  webhookUrlFor(key: string): string | undefined;
  version: 1 | 2 | 3;
}

/** v2/v3 signed string: the six values joined by '|', in the spec's order. */
export const signedValues = (b: Record<string, unknown>): string =>
  [
    b.transaction_reference,
    b.virtual_account_number,
    b.currency,
    b.principal_amount,
    b.settled_amount,
    b.customer_identifier,
  ]
    .map((v) => String(v ?? ''))
    .join('|');

const fmt = (kobo: number) => `${Math.floor(kobo / 100)}.${String(kobo % 100).padStart(2, '0')}`;

/** MM-DD-YYYY (C5) → epoch ms of that day (UTC), or undefined. */
function parseMdy(v: string): number | undefined {
  const m = /^(\d{2})-(\d{2})-(\d{4})$/.exec(v);
  if (!m) return undefined;
  const t = Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2]));
  return Number.isNaN(t) ? undefined : t;
}

/** YY-MM-DD or YYYY-MM-DD (C8) → epoch ms of that day (UTC), or undefined. */
function parseYmd(v: string): number | undefined {
  const m = /^(\d{2}|\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return undefined;
  const year = m[1].length === 2 ? 2000 + Number(m[1]) : Number(m[1]);
  return Date.UTC(year, Number(m[2]) - 1, Number(m[3]));
}

/** Whether a timestamp is within the days from `start` to `end` (both inclusive; either may be absent), read by `parse`. */
function dayRange(start: string | null, end: string | null, parse: (day: string) => number | undefined) {
  const [from, to] = [start ? parse(start) : undefined, end ? parse(end) : undefined];
  return (at: string) =>
    (from === undefined || Date.parse(at) >= from) && (to === undefined || Date.parse(at) < to + DAY_MS);
}

/** The fields of an unacknowledged notification the webhook error log keeps (after its hash), in the error log's order. */
const ERROR_LOG_FIELDS = [
  'meta',
  'channel',
  'remarks',
  'currency',
  'fee_charged',
  'sender_name',
  'encrypted_body',
  'settled_amount',
  'principal_amount',
  'transaction_date',
  'customer_identifier',
  'transaction_indicator',
  'transaction_reference',
  'virtual_account_number',
] as const;

interface ErrorLogRow {
  id: string;
  payload: Record<string, unknown>;
  transaction_ref: string;
  previous_ref: string;
}

const publicAccount = ({ mobile_num: _m, email: _e, ...a }: Account) => a;
const publicCredit = ({ notified_reference: _n, session_id: _s, ...c }: Credit) => c;
const DAY_MS = 24 * 3600 * 1000;

/** The accounts, their credits and the webhook error log: what the handlers and the admin API share. */
class VirtualAccountBook {
  readonly accounts = new Map<string, Account>(); // by customer_identifier
  readonly credits: Credit[] = []; // newest first
  /** Error log rows by the notified reference, in insertion order. */
  readonly errorLog = new Map<string, ErrorLogRow>();
  private freezeNextReason: string | undefined;

  constructor(
    readonly deps: { clock: SandboxClock; ledger: Ledger; webhooks: WebhookDispatcher; checkout: CheckoutApi },
    private readonly opts: VirtualAccountOptions,
  ) {}

  byNumber(n: string): Account | undefined {
    return [...this.accounts.values()].find((a) => a.virtual_account_number === n);
  }

  private newAccountNumber(): string {
    for (;;) {
      const n = `${VIRTUAL_ACCOUNT_PREFIX}${randomDigits(9)}`;
      if (!this.byNumber(n) && !this.deps.checkout.isDynamicAccount(n)) return n;
    }
  }

  /** Account creation's refusals: a customer identifier in use, a BVN whose details do not match. */
  refusal(body: Record<string, unknown>): Reply | undefined {
    if (this.accounts.has(String(body.customer_identifier)))
      return fail(400, 'Validation Failure, Customer identifier already exists');
    if (String(body.bvn) === MISMATCHED_BVN)
      return fail(400, 'Validation Failure, BVN details do not match the customer details');
    return undefined;
  }

  create(body: Record<string, unknown>, first: string, last: string): Account {
    const now = this.deps.clock.iso();
    const beneficiary = body.beneficiary_account;
    const account: Account = {
      first_name: first,
      last_name: last,
      bank_code: '058',
      virtual_account_number: this.newAccountNumber(),
      beneficiary_account: beneficiary === undefined || beneficiary === null ? null : String(beneficiary),
      customer_identifier: String(body.customer_identifier),
      mobile_num: String(body.mobile_num),
      email: typeof body.email === 'string' ? body.email : null,
      created_at: now,
      updated_at: now,
    };
    this.accounts.set(account.customer_identifier, account);
    return account;
  }

  /** Credits the account (C9) and notifies the merchant (E-2). */
  simulate(body: Record<string, unknown>, key: string): Reply {
    const a = this.byNumber(String(body.virtual_account_number));
    if (!a) return fail(404, 'Virtual account not found');
    const amount = body.amount;
    const principal =
      amount === undefined || amount === null || amount === '' ? DEFAULT_SIMULATED_AMOUNT : String(amount);
    const credit = this.credit(a, Math.round(Number(principal) * 100));
    this.credits.unshift(credit);
    this.deps.ledger.record('va_credit', credit.transaction_reference, credit.principal_amount, 'NGN');
    const url = this.opts.webhookUrlFor(key);
    if (url) this.notify(url, a, credit, key);
    return { status: 200, body: { success: true, message: 'Success', data: {} } };
  }

  private credit(a: Account, kobo: number): Credit {
    const clock = this.deps.clock;
    const feeKobo = Math.min(Math.round(kobo / 200), 10_000); // the sandbox's fee: 0.5 %, capped at 100.00
    const previousRef = `REF${clock.now()}${randomDigits(6)}`;
    const frozenFor = this.freezeNextReason;
    this.freezeNextReason = undefined;
    return {
      transaction_reference: previousRef,
      notified_reference: this.opts.version === 3 ? `V3${randomUUID().replace(/-/g, '').toUpperCase()}` : previousRef,
      session_id: `100004${randomDigits(24)}`,
      virtual_account_number: a.virtual_account_number,
      principal_amount: fmt(kobo),
      settled_amount: fmt(kobo - feeKobo),
      fee_charged: fmt(feeKobo),
      transaction_date: clock.iso(),
      transaction_indicator: 'C',
      remarks: 'Transfer from SANDBOX SENDER',
      currency: 'NGN',
      frozen_transaction:
        frozenFor === undefined
          ? null
          : { freeze_transaction_ref: `FRZ${clock.now()}${randomDigits(4)}`, reason: frozenFor },
      customer: { customer_identifier: a.customer_identifier },
    };
  }

  private notify(url: string, a: Account, c: Credit, key: string): void {
    const v = this.opts.version;
    const body = notification(v, a, c);
    const sign = (raw: Buffer) =>
      v === 1 ? WebhookDispatcher.hmac(key, raw).toUpperCase() : WebhookDispatcher.hmac(key, signedValues(body));
    let signature = '';
    const ref = c.notified_reference;
    this.deps.webhooks.sendVirtualAccount(url, ref, body, (raw) => (signature = sign(raw)), {
      onUnacknowledged: () => {
        if (this.errorLog.has(ref)) return;
        const payload = { hash: signature, ...Object.fromEntries(ERROR_LOG_FIELDS.map((f) => [f, body[f]])) };
        this.errorLog.set(ref, {
          id: randomUUID(),
          payload,
          transaction_ref: ref,
          previous_ref: c.transaction_reference,
        });
      },
      // Once the merchant deleted the entry (C11) it has its record: no more retries.
      keepRetrying: () => this.errorLog.has(ref),
    });
  }

  accountCount(): number {
    return this.accounts.size;
  }

  /** Admin: the next simulated credit is frozen (the service holds the funds) with this reason. */
  freezeNext(reason: string): void {
    this.freezeNextReason = reason;
  }

  /** Admin: releases a frozen credit (the filtered search then shows frozen_transaction null). False when no frozen credit has the reference. */
  release(reference: string): boolean {
    const c = this.credits.find(
      (t) =>
        (t.transaction_reference === reference || t.notified_reference === reference) && t.frozen_transaction !== null,
    );
    if (!c) return false;
    c.frozen_transaction = null;
    return true;
  }
}

/** The credit notification's body (E-2), in the configured signing version. */
function notification(v: 1 | 2 | 3, a: Account, c: Credit): Record<string, unknown> {
  return {
    transaction_reference: c.notified_reference,
    virtual_account_number: c.virtual_account_number,
    principal_amount: c.principal_amount,
    settled_amount: c.settled_amount,
    fee_charged: c.fee_charged,
    transaction_date: c.transaction_date,
    customer_identifier: a.customer_identifier,
    transaction_indicator: 'C',
    remarks: c.remarks,
    currency: c.currency,
    channel: 'virtual-account',
    sender_name: 'SANDBOX SENDER',
    meta: {
      freeze_transaction_ref: c.frozen_transaction?.freeze_transaction_ref ?? null,
      reason_for_frozen_transaction: c.frozen_transaction?.reason ?? null,
    },
    // Opaque here: the spec does not show how encrypted_body is made, so it cannot be checked.
    encrypted_body: Buffer.from(`${c.notified_reference}:${randomUUID()}`).toString('base64'),
    ...(v === 1
      ? {}
      : {
          version: `v${v}`,
          first_name: a.first_name,
          last_name: a.last_name,
          prefix: 'SBX',
          session_id: c.session_id,
          masked_sender_account_number: `012****${randomDigits(3)}`,
          transaction_uuid: randomUUID(),
        }),
  };
}

/** A B2C account (C1). */
function createCustomerAccount(book: VirtualAccountBook, { body }: RequestContext): Reply {
  return book.refusal(body) ?? ok(publicAccount(book.create(body, String(body.first_name), String(body.last_name))));
}

/** A B2B account (C2), settling to a partner-bank account when one is named. */
function createBusinessAccount(book: VirtualAccountBook, { body }: RequestContext): Reply {
  const refused = book.refusal(body);
  if (refused) return refused;
  const beneficiary = body.beneficiary_account;
  if (beneficiary !== undefined && beneficiary !== null && !PARTNER_BANK_ACCOUNTS.includes(String(beneficiary))) {
    return fail(424, `Validation Failure No record found for Account number-${String(beneficiary)}`, {
      stringStatus: true,
      data: {
        first_name: null,
        last_name: null,
        bank_code: null,
        virtual_account_number: null,
        beneficiary_account: null,
        customer_identifier: null,
        created_at: MIN_TIMESTAMP,
        updated_at: MIN_TIMESTAMP,
      },
    });
  }
  return ok(publicAccount(book.create(body, String(body.business_name), '')));
}

/** One customer's credits (C3). */
const customerCredits: RouteHandler<VirtualAccountBook> = ({ credits }, { params }) =>
  ok(credits.filter((t) => t.customer.customer_identifier === params.id).map(publicCredit));

/** Every credit (C4). */
const merchantCredits: RouteHandler<VirtualAccountBook> = ({ credits }) => ok(credits.map(publicCredit));

/** The credits (C5), filtered, a page at a time. */
function searchCredits({ credits, errorLog }: VirtualAccountBook, { query }: RequestContext): Reply {
  const get = (name: string) => query.get(name) || undefined;
  const [va, ci, ref, session] = ['virtualAccount', 'customerIdentifier', 'transactionReference', 'session_id'].map(
    get,
  );
  const inDates = dayRange(query.get('startDate'), query.get('endDate'), parseMdy);
  let rows = credits.filter(
    (t) =>
      (!va || t.virtual_account_number === va) &&
      (!ci || t.customer.customer_identifier === ci) &&
      (!ref || t.transaction_reference === ref) &&
      (!session || t.session_id === session) &&
      inDates(t.transaction_date),
  );
  if (query.get('dir') === 'ASC') rows = [...rows].reverse();
  const out = rows.map((t) => ({
    ...publicCredit(t),
    alerted_merchant: !errorLog.has(t.notified_reference),
    merchant_settlement_date: t.transaction_date,
  }));
  return ok({ count: out.length, rows: page(out, query, 20), query: {} });
}

/** An account by its number (C6). */
function accountByNumber(book: VirtualAccountBook, { params }: RequestContext): Reply {
  const a = book.byNumber(params.number);
  if (!a) return fail(404, 'Virtual account not found');
  const { first_name, last_name, mobile_num, email, customer_identifier, virtual_account_number } = a;
  return ok({ first_name, last_name, mobile_num, email, customer_identifier, virtual_account_number });
}

/** The accounts (C8) created between two days, a page at a time. */
function listAccounts({ accounts }: VirtualAccountBook, { query }: RequestContext): Reply {
  const inDates = dayRange(query.get('startDate'), query.get('EndDate') ?? query.get('endDate'), parseYmd);
  const rows = [...accounts.values()]
    .filter((a) => inDates(a.created_at))
    .map((a) => ({
      bank_code: a.bank_code,
      virtual_account_number: a.virtual_account_number,
      beneficiary_account: a.beneficiary_account,
      created_at: a.created_at,
      updated_at: a.updated_at,
      customer: { first_name: a.first_name, last_name: a.last_name, customer_identifier: a.customer_identifier },
    }));
  return ok(page(rows, query, 100));
}

/** The unacknowledged notifications (C10). */
function webhookLogs({ errorLog }: VirtualAccountBook, { query }: RequestContext): Reply {
  const rows = [...errorLog.values()].slice(0, 100).map(({ previous_ref: _p, ...r }) => r);
  return ok({ count: rows.length, rows: page(rows, query, 100) });
}

/** Deletes an error-log entry (C11) by the reference the notification carried (the previous format is accepted too). */
function deleteWebhookLog({ errorLog }: VirtualAccountBook, { params }: RequestContext): Reply {
  for (const [key, row] of errorLog) {
    if (key === params.ref || row.previous_ref === params.ref) {
      errorLog.delete(key);
      return ok(1);
    }
  }
  return ok(0, 'No error-log entry for that reference');
}

/** An account by its customer identifier (C7). */
const accountById: RouteHandler<VirtualAccountBook> = ({ accounts }, { params }) => {
  const a = accounts.get(params.id);
  return a ? ok(publicAccount(a)) : fail(404, 'Virtual account not found');
};

/** The simulated credit (C9), and the simulated transfer for a checkout's dynamic account (A2). */
function simulatePayment(book: VirtualAccountBook, { body, secretKey }: RequestContext): Reply {
  const checkout = book.deps.checkout;
  if (body.dva === true || body.dva === 'true') return checkout.simulateTransfer(body);
  const number = String(body.virtual_account_number);
  if (!book.byNumber(number) && checkout.isDynamicAccount(number)) return checkout.simulateTransfer(body);
  return book.simulate(body, secretKey);
}

const ID = { params: pathParams('id') };
const BY_NUMBER = { params: pathParams({ number: matching(TEN_DIGITS, 'must be 10 digits') }) };

export function registerVirtualAccounts(
  router: Router,
  deps: { clock: SandboxClock; ledger: Ledger; webhooks: WebhookDispatcher; checkout: CheckoutApi },
  opts: VirtualAccountOptions,
): VirtualAccountsApi {
  const book = new VirtualAccountBook(deps, opts);
  addRoutes(router, 'virtual-account', book, [
    ['POST', '/virtual-account', CREATE_CUSTOMER_ACCOUNT_FIELDS, createCustomerAccount],
    ['POST', '/virtual-account/business', CREATE_BUSINESS_ACCOUNT_FIELDS, createBusinessAccount],
    ['GET', '/virtual-account/customer/transactions/{id}', ID, customerCredits],
    ['GET', '/virtual-account/merchant/transactions', {}, merchantCredits],
    ['GET', '/virtual-account/merchant/transactions/all', SEARCH_CREDITS_FIELDS, searchCredits],
    ['GET', '/virtual-account/customer/{number}', BY_NUMBER, accountByNumber],
    ['GET', '/virtual-account/merchant/accounts', LIST_ACCOUNTS_FIELDS, listAccounts],
    ['GET', '/virtual-account/webhook/logs', WEBHOOK_LOGS_FIELDS, webhookLogs],
    ['DELETE', '/virtual-account/webhook/logs/{ref}', { params: pathParams('ref') }, deleteWebhookLog],
    // The lookup by customer identifier after the fixed paths above, so /merchant/... and /customer/... are not read as identifiers.
    ['GET', '/virtual-account/{id}', ID, accountById],
    ['POST', '/virtual-account/simulate/payment', SIMULATE_PAYMENT_FIELDS, simulatePayment],
  ]);
  return book;
}

/** What the admin API does with the virtual accounts. */
export type VirtualAccountsApi = Pick<VirtualAccountBook, 'accountCount' | 'freezeNext' | 'release'>;
