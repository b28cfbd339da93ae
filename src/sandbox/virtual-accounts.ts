// C. Virtual accounts: B2C (C1) and B2B (C2) accounts, their transactions (C3-C5), lookups
// (C6-C8), the simulated credit (C9) with its signed E-2 notification, and the webhook error
// log of unacknowledged notifications (C10, C11). C9's path also serves A2 ("dva": true).
import { randomUUID } from 'node:crypto';
import type { CheckoutApi } from './checkout';
import type { SandboxClock } from './clock';
import { z } from 'zod';
import { DYNAMIC_ACCOUNT_PREFIX } from './checkout';
import { fail, ok, page, randomDigits, type Reply, type Router } from './http';
import type { Ledger } from './ledger';
import { WebhookDispatcher } from './webhooks';
import {
  asIs,
  identifier,
  matching,
  oneOf,
  pathParams,
  positiveInteger,
  rule,
  text,
  type RouteFields,
} from './validation';

/** Settlement accounts that exist at the partner bank; any other beneficiary_account gets C2's 424. */
export const PARTNER_BANK_ACCOUNTS = ['0123456789', '1234567890'];
/** A BVN whose details never match: C1/C2 refuse it and no account is created. */
export const MISMATCHED_BVN = '22200000000';
/** Virtual accounts get numbers starting with this digit. */
export const VIRTUAL_ACCOUNT_PREFIX = '4';
/** C9 without an amount credits this. */
export const DEFAULT_SIMULATED_AMOUNT = '1000.00';
const MIN_TIMESTAMP = '0001-01-01T00:00:00.000Z';

const TEN_DIGITS = /^\d{10}$/;
const ACCOUNT_FIELDS = {
  mobile_num: matching(/^\d{1,11}$/, 'must be at most 11 digits'),
  bvn: matching(/^\d{11}$/, 'must be 11 digits'),
  beneficiary_account: matching(TEN_DIGITS, 'must be 10 digits').nullish(),
};
const C1_FIELDS: RouteFields = {
  body: z.object({
    customer_identifier: text(),
    first_name: text(),
    last_name: text(),
    ...ACCOUNT_FIELDS,
    dob: matching(/^(0[1-9]|1[0-2])\/(0[1-9]|[12]\d|3[01])\/\d{4}$/, 'must be in the format mm/dd/yyyy'),
    gender: oneOf(['1', '2'], "must be '1' (male) or '2' (female)"),
    address: text(),
  }),
  // As the spec shows C1's message for this field.
  message: (field, rule) =>
    field === 'customer_identifier' && /^is /.test(rule)
      ? 'Validation Failure, Customer identifier is required'
      : `${field} ${rule}`,
};
const C2_FIELDS: RouteFields = {
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
const whole = matching(/^\d{1,6}$/, 'must be a whole number');
/** C5's messages quote the field, as the spec shows them ('"virtualAccount" is not allowed to be empty'). */
const C5_FIELDS: RouteFields = {
  query: z.object({
    virtualAccount: matching(TEN_DIGITS, 'must be 10 digits').optional(),
    customerIdentifier: identifier().optional(),
    transactionReference: identifier().optional(),
    session_id: identifier().optional(),
    startDate: mdy.optional(),
    endDate: mdy.optional(),
    page: whole.optional(),
    perPage: whole.optional(),
    dir: oneOf(['ASC', 'DESC'], 'must be one of [ASC, DESC]').optional(),
  }),
  message: (field, rule) => `"${field}" ${rule}`,
};
const ymd = rule(
  (v) => typeof v === 'string' && parseYmd(v) !== undefined,
  'must be in the format YY-MM-DD',
).optional();
const C8_FIELDS: RouteFields = {
  query: z.object({ page: whole.optional(), perPage: whole.optional(), startDate: ymd, EndDate: ymd, endDate: ymd }),
  message: (field, rule) => `"${field}" ${rule}`,
};
const C10_FIELDS: RouteFields = { query: z.object({ page: whole.optional(), perPage: whole.optional() }) };
/**
 * C9 and A2 share a path: A2 (`dva: true`, or a checkout's dynamic account, numbered '99…') pays the
 * amount due in kobo; C9 credits a decimal string, 1000.00 when absent.
 */
const C9_FIELDS: RouteFields = {
  body: z
    .object({
      virtual_account_number: matching(TEN_DIGITS, 'must be 10 digits'),
      amount: z.unknown().optional(),
      dva: z.unknown().optional(),
    })
    .superRefine((b, ctx) => {
      const a2 =
        b.dva === true || b.dva === 'true' || String(b.virtual_account_number).startsWith(DYNAMIC_ACCOUNT_PREFIX);
      if (a2 && (b.amount === undefined || b.amount === null || b.amount === ''))
        ctx.addIssue({ code: 'custom', path: ['amount'], message: 'is required' });
      else if (a2 && !positiveInteger('').safeParse(b.amount).success)
        ctx.addIssue({ code: 'custom', ...asIs(['amount'], 'must be a positive integer in the lowest currency unit') });
      else if (!a2 && b.amount !== undefined && b.amount !== null && b.amount !== '' && !decimalAmount(b.amount))
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
  /** The previous-format reference: what C3-C5 show and requery by. */
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

export function registerVirtualAccounts(
  router: Router,
  deps: { clock: SandboxClock; ledger: Ledger; webhooks: WebhookDispatcher; checkout: CheckoutApi },
  opts: VirtualAccountOptions,
) {
  const { clock, ledger, webhooks, checkout } = deps;
  const accounts = new Map<string, Account>(); // by customer_identifier
  const credits: Credit[] = []; // newest first
  /** Error log rows by the notified reference, in insertion order. */
  let freezeNextReason: string | undefined;
  const errorLog = new Map<
    string,
    { id: string; payload: Record<string, unknown>; transaction_ref: string; previous_ref: string }
  >();

  const byNumber = (n: string) => [...accounts.values()].find((a) => a.virtual_account_number === n);
  const newAccountNumber = (): string => {
    for (;;) {
      const n = `${VIRTUAL_ACCOUNT_PREFIX}${randomDigits(9)}`;
      if (!byNumber(n) && !checkout.isDynamicAccount(n)) return n;
    }
  };

  const commonChecks = (body: Record<string, unknown>): Reply | undefined => {
    if (accounts.has(String(body.customer_identifier)))
      return fail(400, 'Validation Failure, Customer identifier already exists');
    if (String(body.bvn) === MISMATCHED_BVN)
      return fail(400, 'Validation Failure, BVN details do not match the customer details');
    return undefined;
  };

  function create(body: Record<string, unknown>, first: string, last: string): Account {
    const now = clock.iso();
    const account: Account = {
      first_name: first,
      last_name: last,
      bank_code: '058',
      virtual_account_number: newAccountNumber(),
      beneficiary_account:
        body.beneficiary_account === undefined || body.beneficiary_account === null
          ? null
          : String(body.beneficiary_account),
      customer_identifier: String(body.customer_identifier),
      mobile_num: String(body.mobile_num),
      email: typeof body.email === 'string' ? body.email : null,
      created_at: now,
      updated_at: now,
    };
    accounts.set(account.customer_identifier, account);
    return account;
  }
  const publicAccount = ({ mobile_num: _m, email: _e, ...a }: Account) => a;
  const publicCredit = ({ notified_reference: _n, session_id: _s, ...c }: Credit) => c;

  // C1.
  router.add('POST', '/virtual-account', 'virtual-account', C1_FIELDS, ({ body }) => {
    const invalid = commonChecks(body);
    if (invalid) return invalid;
    return ok(publicAccount(create(body, String(body.first_name), String(body.last_name))));
  });

  // C2.
  router.add('POST', '/virtual-account/business', 'virtual-account', C2_FIELDS, ({ body }) => {
    const invalid = commonChecks(body);
    if (invalid) return invalid;
    if (
      body.beneficiary_account !== undefined &&
      body.beneficiary_account !== null &&
      !PARTNER_BANK_ACCOUNTS.includes(String(body.beneficiary_account))
    ) {
      return fail(424, `Validation Failure No record found for Account number-${String(body.beneficiary_account)}`, {
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
    return ok(publicAccount(create(body, String(body.business_name), '')));
  });

  // C3, C4.
  router.add(
    'GET',
    '/virtual-account/customer/transactions/{id}',
    'virtual-account',
    { params: pathParams('id') },
    ({ params }) => ok(credits.filter((t) => t.customer.customer_identifier === params.id).map(publicCredit)),
  );
  router.add('GET', '/virtual-account/merchant/transactions', 'virtual-account', {}, () =>
    ok(credits.map(publicCredit)),
  );

  // C5.
  router.add('GET', '/virtual-account/merchant/transactions/all', 'virtual-account', C5_FIELDS, ({ query }) => {
    const va = query.get('virtualAccount');
    const dir = query.get('dir');
    const start = query.get('startDate');
    const end = query.get('endDate');
    const startT = start === null ? undefined : parseMdy(start);
    const endT = end === null ? undefined : parseMdy(end);
    const ci = query.get('customerIdentifier');
    const ref = query.get('transactionReference');
    const session = query.get('session_id');
    let rows = credits.filter((t) => {
      const at = Date.parse(t.transaction_date);
      return (
        (!va || t.virtual_account_number === va) &&
        (!ci || t.customer.customer_identifier === ci) &&
        (!ref || t.transaction_reference === ref) &&
        (!session || t.session_id === session) &&
        (startT === undefined || at >= startT) &&
        (endT === undefined || at < endT + 24 * 3600 * 1000)
      );
    });
    if (dir === 'ASC') rows = [...rows].reverse();
    const out = rows.map((t) => ({
      ...publicCredit(t),
      alerted_merchant: !errorLog.has(t.notified_reference),
      merchant_settlement_date: t.transaction_date,
    }));
    return ok({ count: out.length, rows: page(out, query.get('page'), query.get('perPage'), 20), query: {} });
  });

  // C6.
  const byAccountNumber = { params: pathParams({ number: matching(TEN_DIGITS, 'must be 10 digits') }) };
  router.add('GET', '/virtual-account/customer/{number}', 'virtual-account', byAccountNumber, ({ params }) => {
    const a = byNumber(params.number);
    if (!a) return fail(404, 'Virtual account not found');
    return ok({
      first_name: a.first_name,
      last_name: a.last_name,
      mobile_num: a.mobile_num,
      email: a.email,
      customer_identifier: a.customer_identifier,
      virtual_account_number: a.virtual_account_number,
    });
  });

  // C8.
  router.add('GET', '/virtual-account/merchant/accounts', 'virtual-account', C8_FIELDS, ({ query }) => {
    const start = query.get('startDate');
    const end = query.get('EndDate') ?? query.get('endDate');
    const startT = start ? parseYmd(start) : undefined;
    const endT = end ? parseYmd(end) : undefined;
    const rows = [...accounts.values()]
      .filter(
        (a) =>
          (startT === undefined || Date.parse(a.created_at) >= startT) &&
          (endT === undefined || Date.parse(a.created_at) < endT + 24 * 3600 * 1000),
      )
      .map((a) => ({
        bank_code: a.bank_code,
        virtual_account_number: a.virtual_account_number,
        beneficiary_account: a.beneficiary_account,
        created_at: a.created_at,
        updated_at: a.updated_at,
        customer: { first_name: a.first_name, last_name: a.last_name, customer_identifier: a.customer_identifier },
      }));
    return ok(page(rows, query.get('page'), query.get('perPage'), 100));
  });

  // C10.
  router.add('GET', '/virtual-account/webhook/logs', 'virtual-account', C10_FIELDS, ({ query }) => {
    const rows = [...errorLog.values()].slice(0, 100).map(({ previous_ref: _p, ...r }) => r);
    return ok({ count: rows.length, rows: page(rows, query.get('page'), query.get('perPage'), 100) });
  });

  // C11: by the reference the notification carried (the previous format is accepted too).
  router.add(
    'DELETE',
    '/virtual-account/webhook/logs/{ref}',
    'virtual-account',
    { params: pathParams('ref') },
    ({ params }) => {
      for (const [key, row] of errorLog) {
        if (key === params.ref || row.previous_ref === params.ref) {
          errorLog.delete(key);
          return ok(1);
        }
      }
      return ok(0, 'No error-log entry for that reference');
    },
  );

  // C7 (after the fixed paths above, so /merchant/... and /customer/... are not read as identifiers).
  router.add('GET', '/virtual-account/{id}', 'virtual-account', { params: pathParams('id') }, ({ params }) => {
    const a = accounts.get(params.id);
    return a ? ok(publicAccount(a)) : fail(404, 'Virtual account not found');
  });

  // C9 and A2.
  router.add('POST', '/virtual-account/simulate/payment', 'virtual-account', C9_FIELDS, ({ body, secretKey }) => {
    if (body.dva === true || body.dva === 'true') return checkout.simulateTransfer(body);
    const number = String(body.virtual_account_number);
    if (!byNumber(number) && checkout.isDynamicAccount(number)) return checkout.simulateTransfer(body);
    return simulate(body, secretKey);
  });

  function simulate(body: Record<string, unknown>, key: string): Reply {
    const a = byNumber(String(body.virtual_account_number));
    if (!a) return fail(404, 'Virtual account not found');
    const principal =
      body.amount === undefined || body.amount === null || body.amount === ''
        ? DEFAULT_SIMULATED_AMOUNT
        : String(body.amount);
    const kobo = Math.round(Number(principal) * 100);
    const feeKobo = Math.min(Math.round(kobo / 200), 10_000); // the sandbox's fee: 0.5 %, capped at 100.00
    const previousRef = `REF${clock.now()}${randomDigits(6)}`;
    const notifiedRef = opts.version === 3 ? `V3${randomUUID().replace(/-/g, '').toUpperCase()}` : previousRef;
    const credit: Credit = {
      transaction_reference: previousRef,
      notified_reference: notifiedRef,
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
        freezeNextReason === undefined
          ? null
          : { freeze_transaction_ref: `FRZ${clock.now()}${randomDigits(4)}`, reason: freezeNextReason },
      customer: { customer_identifier: a.customer_identifier },
    };
    freezeNextReason = undefined;
    credits.unshift(credit);
    ledger.record('va_credit', previousRef, credit.principal_amount, 'NGN');
    const url = opts.webhookUrlFor(key);
    if (url) notify(url, a, credit, key);
    return { status: 200, body: { success: true, message: 'Success', data: {} } };
  }

  function notify(url: string, a: Account, c: Credit, key: string): void {
    const v = opts.version;
    const body: Record<string, unknown> = {
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
    const sign = (raw: Buffer) =>
      v === 1 ? WebhookDispatcher.hmac(key, raw).toUpperCase() : WebhookDispatcher.hmac(key, signedValues(body));
    let signature = '';
    webhooks.sendVirtualAccount(url, c.notified_reference, body, (raw) => (signature = sign(raw)), {
      onUnacknowledged: () => {
        if (errorLog.has(c.notified_reference)) return;
        const payload: Record<string, unknown> = {
          hash: signature,
          meta: body.meta,
          channel: body.channel,
          remarks: body.remarks,
          currency: body.currency,
          fee_charged: body.fee_charged,
          sender_name: body.sender_name,
          encrypted_body: body.encrypted_body,
          settled_amount: body.settled_amount,
          principal_amount: body.principal_amount,
          transaction_date: body.transaction_date,
          customer_identifier: body.customer_identifier,
          transaction_indicator: body.transaction_indicator,
          transaction_reference: body.transaction_reference,
          virtual_account_number: body.virtual_account_number,
        };
        errorLog.set(c.notified_reference, {
          id: randomUUID(),
          payload,
          transaction_ref: c.notified_reference,
          previous_ref: c.transaction_reference,
        });
      },
      // Once the merchant deleted the entry (C11) it has its record: no more retries.
      keepRetrying: () => errorLog.has(c.notified_reference),
    });
  }

  return {
    accountCount: () => accounts.size,
    /** Admin: the next simulated credit is frozen (the service holds the funds) with this reason. */
    freezeNext(reason: string): void {
      freezeNextReason = reason;
    },
    /** Admin: releases a frozen credit (C5 then shows frozen_transaction null). False when no frozen credit has the reference. */
    release(reference: string): boolean {
      const c = credits.find(
        (t) =>
          (t.transaction_reference === reference || t.notified_reference === reference) &&
          t.frozen_transaction !== null,
      );
      if (!c) return false;
      c.frozen_transaction = null;
      return true;
    },
  };
}

export type VirtualAccountsApi = ReturnType<typeof registerVirtualAccounts>;
