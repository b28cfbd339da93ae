// Virtual accounts (C1-C11): B2C and B2B accounts, their transactions, simulated credits that
// send the signed E-2 notification, and the webhook error log for unacknowledged ones.
import { createHmac, randomUUID } from 'node:crypto';
import { fail, ok, randomDigits, requireFields, type Reply, type SandboxCore } from './core';

/** Settlement accounts that "exist" at the partner bank (B2B beneficiary check). */
export const PARTNER_BANK_ACCOUNTS = ['0123456789', '1234567890'];

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

export interface VaWebhookOptions {
  url?: string;
  version: 1 | 2 | 3;
  retryScheduleMs: number[];
}

export function registerVirtualAccounts(core: SandboxCore, webhook: VaWebhookOptions) {
  const accounts = new Map<string, Account>(); // by customer_identifier
  const transactions: Record<string, unknown>[] = [];
  const errorLog = new Map<string, Record<string, unknown>>();
  const deliveries: { ref: string; attempt: number; acknowledged: boolean }[] = [];

  const byNumber = (n: string) => [...accounts.values()].find((a) => a.virtual_account_number === n);
  const validateCommon = (body: Record<string, unknown>): Reply | undefined => {
    if (!/^\d{1,11}$/.test(String(body.mobile_num))) return fail(400, 'mobile_num must be at most 11 digits');
    if (body.beneficiary_account !== undefined && !/^\d{10}$/.test(String(body.beneficiary_account))) return fail(400, 'beneficiary_account must be 10 digits');
    if (accounts.has(String(body.customer_identifier))) return fail(400, 'Validation Failure, Customer identifier already exists');
    return undefined;
  };
  const create = (body: Record<string, unknown>, first: string, last: string): Account => {
    const now = core.clock.iso();
    const account: Account = {
      first_name: first, last_name: last, bank_code: '058', virtual_account_number: `4${randomDigits(9)}`,
      beneficiary_account: body.beneficiary_account === undefined ? null : String(body.beneficiary_account), customer_identifier: String(body.customer_identifier),
      mobile_num: String(body.mobile_num), email: typeof body.email === 'string' ? body.email : null, created_at: now, updated_at: now,
    };
    accounts.set(account.customer_identifier, account);
    return account;
  };
  const publicAccount = ({ mobile_num: _m, email: _e, ...a }: Account) => a;

  core.route('POST', '/virtual-account', 'virtual-account', ({ body }) => {
    if (body.customer_identifier === undefined || body.customer_identifier === '') return fail(400, 'Validation Failure, Customer identifier is required');
    const missing = requireFields(body, ['first_name', 'last_name', 'mobile_num', 'bvn', 'dob', 'gender', 'address']);
    if (missing) return missing;
    if (!/^(0[1-9]|1[0-2])\/(0[1-9]|[12]\d|3[01])\/\d{4}$/.test(String(body.dob))) return fail(400, 'dob must be in the format mm/dd/yyyy');
    if (body.gender !== '1' && body.gender !== '2') return fail(400, "gender must be '1' (male) or '2' (female)");
    if (!/^\d{11}$/.test(String(body.bvn))) return fail(400, 'Validation Failure, BVN does not match the customer details');
    const invalid = validateCommon(body);
    if (invalid) return invalid;
    return ok(publicAccount(create(body, String(body.first_name), String(body.last_name))));
  });

  core.route('POST', '/virtual-account/business', 'virtual-account', ({ body }) => {
    const missing = requireFields(body, ['bvn', 'business_name', 'customer_identifier', 'mobile_num']);
    if (missing) return missing;
    if (!/^[A-Za-z0-9]+$/.test(String(body.customer_identifier))) return fail(400, 'customer_identifier must be alphanumeric');
    const invalid = validateCommon(body);
    if (invalid) return invalid;
    if (body.beneficiary_account !== undefined && !PARTNER_BANK_ACCOUNTS.includes(String(body.beneficiary_account))) {
      return fail(424, `Validation Failure No record found for Account number-${String(body.beneficiary_account)}`, {
        stringStatus: true,
        data: { first_name: null, last_name: null, bank_code: null, virtual_account_number: null, beneficiary_account: null, customer_identifier: null, created_at: '0001-01-01T00:00:00.000Z', updated_at: '0001-01-01T00:00:00.000Z' },
      });
    }
    return ok(publicAccount(create(body, String(body.business_name), '')));
  });

  core.route('GET', '/virtual-account/customer/transactions/{id}', 'virtual-account', ({ params }) =>
    ok(transactions.filter((t) => (t.customer as { customer_identifier: string }).customer_identifier === params.id)),
  );
  core.route('GET', '/virtual-account/merchant/transactions', 'virtual-account', () => ok(transactions));
  core.route('GET', '/virtual-account/merchant/transactions/all', 'virtual-account', ({ query }) => {
    for (const key of ['virtualAccount', 'customerIdentifier', 'transactionReference', 'session_id']) {
      if (query.get(key) === '') return fail(400, `"${key}" is not allowed to be empty`);
    }
    let rows: Record<string, unknown>[] = transactions.map((t) => ({ ...t, alerted_merchant: true, merchant_settlement_date: t.transaction_date }));
    const va = query.get('virtualAccount');
    if (va) rows = rows.filter((t) => t.virtual_account_number === va);
    const ci = query.get('customerIdentifier');
    if (ci) rows = rows.filter((t) => (t.customer as { customer_identifier: string }).customer_identifier === ci);
    const ref = query.get('transactionReference');
    if (ref) rows = rows.filter((t) => t.transaction_reference === ref);
    if (query.get('dir') === 'ASC') rows.reverse();
    const perPage = Math.max(Number(query.get('perPage') ?? 20) || 20, 1);
    const page = Math.max(Number(query.get('page') ?? 1) || 1, 1);
    return ok({ count: rows.length, rows: rows.slice((page - 1) * perPage, page * perPage), query: {} });
  });
  core.route('GET', '/virtual-account/customer/{number}', 'virtual-account', ({ params }) => {
    const a = byNumber(params.number);
    if (!a) return fail(404, 'Virtual account not found');
    return ok({ first_name: a.first_name, last_name: a.last_name, mobile_num: a.mobile_num, email: a.email, customer_identifier: a.customer_identifier, virtual_account_number: a.virtual_account_number });
  });
  core.route('GET', '/virtual-account/merchant/accounts', 'virtual-account', () =>
    ok([...accounts.values()].map((a) => ({
      bank_code: a.bank_code, virtual_account_number: a.virtual_account_number, beneficiary_account: a.beneficiary_account, created_at: a.created_at, updated_at: a.updated_at,
      customer: { first_name: a.first_name, last_name: a.last_name, customer_identifier: a.customer_identifier },
    }))),
  );
  core.route('GET', '/virtual-account/webhook/logs', 'virtual-account', ({ query }) => {
    const rows = [...errorLog.values()].slice(0, 100);
    const perPage = Math.min(Math.max(Number(query.get('perPage') ?? 100) || 100, 1), 100);
    const page = Math.max(Number(query.get('page') ?? 1) || 1, 1);
    return ok({ count: rows.length, rows: rows.slice((page - 1) * perPage, page * perPage) });
  });
  core.route('DELETE', '/virtual-account/webhook/logs/{ref}', 'virtual-account', ({ params }) =>
    errorLog.delete(params.ref) ? ok(1) : fail(404, 'Webhook log entry not found'),
  );
  core.route('GET', '/virtual-account/{id}', 'virtual-account', ({ params }) => {
    const a = accounts.get(params.id);
    return a ? ok(publicAccount(a)) : fail(404, 'Virtual account not found');
  });

  function signature(raw: string, body: Record<string, unknown>, key: string): string {
    if (webhook.version === 1) return createHmac('sha512', key).update(raw).digest('hex').toUpperCase();
    const joined = [body.transaction_reference, body.virtual_account_number, body.currency, body.principal_amount, body.settled_amount, body.customer_identifier].join('|');
    return createHmac('sha512', key).update(joined).digest('hex');
  }

  async function deliver(ref: string, body: Record<string, unknown>, key: string, attempt: number): Promise<void> {
    if (!webhook.url) return;
    const raw = JSON.stringify(body);
    const acknowledged = await fetch(webhook.url, { method: 'POST', body: raw, headers: { 'Content-Type': 'application/json', 'x-service-signature': signature(raw, body, key) } })
      .then(async (r) => {
        const ack = (await r.json().catch(() => undefined)) as Record<string, unknown> | undefined;
        return r.ok && ack?.response_code === 200 && ack.transaction_reference === ref && ack.response_description === 'Success';
      })
      .catch(() => false);
    deliveries.push({ ref, attempt, acknowledged });
    if (acknowledged) return;
    if (!errorLog.has(ref)) {
      const { version: _v, first_name: _f, last_name: _l, ...payload } = body;
      errorLog.set(ref, { id: randomUUID(), payload: { hash: signature(raw, body, key), ...payload }, transaction_ref: ref });
    }
    if (attempt <= webhook.retryScheduleMs.length) setTimeout(() => void deliver(ref, body, key, attempt + 1), webhook.retryScheduleMs[attempt - 1]).unref();
  }

  /** C9: a simulated transfer into a virtual account. */
  function simulate(body: Record<string, unknown>, key: string): Reply {
    const a = byNumber(String(body.virtual_account_number));
    if (!a) return fail(404, 'Virtual account not found');
    const principal = body.amount === undefined ? '1000.00' : String(body.amount);
    if (!/^\d+(\.\d{1,2})?$/.test(principal) || Number(principal) <= 0) return fail(400, 'amount must be a positive decimal string');
    const cents = Math.round(Number(principal) * 100);
    const fee = Math.min(Math.round(cents / 200), 10_000); // 0.5%, capped at 100.00
    const fmt = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
    const ref = `REF${Date.now()}${randomDigits(6)}`;
    const txn = {
      transaction_reference: ref, virtual_account_number: a.virtual_account_number, principal_amount: fmt(cents), settled_amount: fmt(cents - fee), fee_charged: fmt(fee),
      transaction_date: core.clock.iso(), transaction_indicator: 'C', remarks: `Transfer from SANDBOX SENDER`, currency: 'NGN', frozen_transaction: null,
      customer: { customer_identifier: a.customer_identifier },
    };
    transactions.unshift(txn);
    core.record('va_credit', ref, txn.principal_amount, 'NGN');
    const notification: Record<string, unknown> = {
      transaction_reference: ref, virtual_account_number: a.virtual_account_number, principal_amount: txn.principal_amount, settled_amount: txn.settled_amount,
      fee_charged: txn.fee_charged, transaction_date: txn.transaction_date, customer_identifier: a.customer_identifier, transaction_indicator: 'C', remarks: txn.remarks,
      currency: 'NGN', channel: 'virtual-account', sender_name: 'SANDBOX SENDER', meta: { freeze_transaction_ref: null, reason_for_frozen_transaction: null },
      encrypted_body: Buffer.from(ref).toString('base64'),
      ...(webhook.version === 1 ? {} : { version: `v${webhook.version}`, first_name: a.first_name, last_name: a.last_name, session_id: randomDigits(30), transaction_uuid: randomUUID() }),
    };
    void deliver(ref, notification, key, 1);
    return { status: 200, body: { success: true, message: 'Success', data: {} } };
  }

  return { simulate, deliveries: () => deliveries };
}
