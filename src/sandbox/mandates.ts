// D. Direct-debit mandates: created initiated (D1), approved with the OTP inside a session on the
// sandbox clock (D2, D6 resends), debited down to their balance (D3), cancelled with an
// idempotent report (D4), listed with filters and cursors (D5).
// Every accepted D3 is also a transaction known to verify (GET /transaction/verify/{ref}) under
// its transaction_reference (docs/sandbox.md): Success, Failed, or Pending until the admin settles
// it. The admin can script the next D3 answers of a mandate: 200 with status pending or failed.
// An approved FIXED mandate is debited by the sandbox itself on each scheduled date (sandbox clock),
// as the service does: no D3 names those debits (docs/sandbox.md, docs/choices.md).
import { randomUUID } from 'node:crypto';
import type { SandboxClock } from './clock';
import { FixedDebits, type FixedDebitRecord } from './fixed-debits';
import { z } from 'zod';
import { asObject, fail, MERCHANT_ID, ok, randomDigits, type Reply, type Router } from './http';
import type { Ledger } from './ledger';
import type { PaymentStore } from './payments';
import {
  asIs,
  CODE,
  EMAIL,
  identifier,
  identifiers,
  matching,
  oneOf,
  positiveNumber,
  rule,
  text,
  type RouteFields,
} from './validation';

export const MANDATE_OTP = '123456';
/** The OTP session lasts this long on the sandbox clock; D6 opens a new window. */
export const MANDATE_SESSION_MS = 10 * 60 * 1000;
/** N200 in kobo. */
export const MANDATE_MIN_DEBIT = 20_000;
/** The third wrong OTP ends the session (424 until D6 resends). */
export const MANDATE_MAX_WRONG_OTP = 3;
export const PARTNER_BANK_NAME = 'Sandbox Partner Bank';

interface Mandate {
  record: Record<string, unknown>;
  sessionToken: string;
  sessionExpiresAt: number;
  wrongOtps: number;
  createdAt: number;
  /** The key that created the mandate: the service's own FIXED debits are the merchant's transactions. */
  secretKey: string;
  /** FIXED: the schedule D1 gave (the service debits it on its own once approved). */
  fixed?: { frequency: 'MONTHLY' | 'WEEKLY' | 'YEARLY'; interval: number; initialDebitDate: string; amount: number };
}

const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

const ymd = matching(DATE, 'must be YYYY-MM-DD');
const positiveInt = (message: string) => rule((v) => Number.isSafeInteger(v) && (v as number) > 0, message);
const FIXED_SETTINGS = z.object({
  frequency: oneOf(['MONTHLY', 'WEEKLY', 'YEARLY'], 'must be MONTHLY, WEEKLY or YEARLY', true),
  interval: positiveInt('must be a positive integer'),
  initial_debit_amount: positiveInt('must be a positive integer'),
  initial_debit_date: ymd,
});
const D1_FIELDS: RouteFields = {
  body: z
    .object({
      mandate_type: oneOf(['emandate'], 'must be emandate'),
      debit_type: oneOf(['variable', 'fixed'], 'must be VARIABLE or FIXED', true),
      amount: positiveNumber('must be a positive integer in kobo'),
      account_number: matching(/^\d{10}$/, 'must be 10 digits'),
      bank_code: matching(/^\d{3,6}$/, 'must be a NIP bank code'),
      description: text(),
      start_date: ymd,
      end_date: ymd,
      customer_email: matching(EMAIL, 'must be a valid email'),
      transaction_reference: identifier().optional().or(z.literal('')),
      customerInformation: z.object({
        identity: z.object({
          type: oneOf(['bvn'], 'must be bvn', true),
          number: matching(/^\d{11}$/, 'must be 11 digits'),
        }),
        firstName: text(),
        lastName: text(),
        address: text(),
        phone: CODE,
      }),
      fixedMandateSettings: z.unknown().optional(),
    })
    .superRefine((b, ctx) => {
      if (String(b.end_date) < String(b.start_date))
        ctx.addIssue({ code: 'custom', ...asIs(['end_date'], 'must not be before start_date') });
      if (String(b.debit_type).toLowerCase() !== 'fixed') return;
      const fixed = FIXED_SETTINGS.safeParse(b.fixedMandateSettings);
      if (!fixed.success)
        for (const issue of fixed.error.issues)
          ctx.addIssue({ ...issue, path: ['fixedMandateSettings', ...issue.path] } as z.core.$ZodRawIssue);
      else if ((fixed.data.initial_debit_amount as number) > (b.amount as number))
        ctx.addIssue({
          code: 'custom',
          ...asIs(['fixedMandateSettings', 'initial_debit_amount'], 'must not exceed amount'),
        });
    }),
};
const D2_FIELDS: RouteFields = { body: z.object({ session_token: text(), otp: CODE }) };
const D6_FIELDS: RouteFields = { body: z.object({ session_token: text() }) };
const D3_FIELDS: RouteFields = {
  body: z.object({
    amount: positiveNumber('must be a positive integer in kobo'),
    mandate_id: identifier(),
    transaction_reference: identifier(),
  }),
  // The N200 minimum needs no mandate: a debit below it is refused before the mandate is looked up.
  rules: ({ body }) =>
    (body.amount as number) < MANDATE_MIN_DEBIT ? { message: 'Minimum amount for direct debit is N200.' } : undefined,
};
const D4_FIELDS: RouteFields = {
  body: z.object({
    mandateIds: identifiers('must be a list of mandate ids'),
  }),
};
const day = matching(DATE, 'must be YYYY-MM-DD').optional();
const flag = oneOf(['true', 'false'], 'must be true or false', true).optional();
const D5_FIELDS: RouteFields = {
  query: z.object({
    status: oneOf(
      ['initiated', 'approved', 'cancelled', 'rejected'],
      'must be initiated, approved, cancelled or rejected',
      true,
    ).optional(),
    page_size: matching(/^\d{1,4}$/, 'must be a whole number').optional(),
    mandate_id: identifier().optional(),
    merchant_ref: identifier().optional(),
    account_number: matching(/^\d{10}$/, 'must be 10 digits').optional(),
    amount: matching(/^\d{1,15}$/, 'must be a whole number of kobo').optional(),
    is_approved: flag,
    ready_to_debit: flag,
    start_date: day,
    end_date: day,
    cursor: matching(/^\d{1,9}$/, 'is invalid').optional(),
    next_cursor: matching(/^\d{1,9}$/, 'is invalid').optional(),
    prev_cursor: matching(/^\d{1,9}$/, 'is invalid').optional(),
  }),
};

export const MANDATE_DEBIT_OUTCOMES = ['pending', 'failed'] as const;
export type MandateDebitOutcome = (typeof MANDATE_DEBIT_OUTCOMES)[number];

export interface MandatesApi {
  /** Admin: the account holder rejects the mandate (the spec's 'rejected' state). */
  reject(mandateId: string): Reply;
  /** Admin: the debits the sandbox made on its own for a FIXED mandate, one per scheduled date reached. */
  scheduledDebits(mandateId: string): Reply;
  /** Admin: the mandate's next D3 calls answer 200 with these statuses (pending: held until settled; failed: no money moved). */
  scriptDebits(mandateId: string, outcomes: unknown): Reply;
  /** Admin: a pending debit becomes success (applied now, if the balance allows) or failed. */
  settleDebit(reference: string, status: unknown): Reply;
  /**
   * Admin: how D2 answers a wrong OTP. 400 'Invalid OTP' (default; not shown in the spec), or 424
   * 'Invalid or expired session.' — the only D2 error the spec documents — as a real service may.
   */
  setWrongOtpStatus(status: unknown): Reply;
}

export function registerMandates(
  router: Router,
  deps: { clock: SandboxClock; ledger: Ledger; payments: PaymentStore },
): MandatesApi {
  const { clock, ledger, payments } = deps;
  /** Scripted D3 answers per mandate id. */
  const scripted = new Map<string, MandateDebitOutcome[]>();
  let wrongOtpStatus: 400 | 424 = 400;
  /** Pending debits: reference → mandate id and amount. */
  const pendingDebits = new Map<string, { mandateId: string; amount: number }>();

  /** The debit as a transaction verify knows (type Bank, no webhook). */
  const recordTransaction = (
    m: Mandate,
    ref: string,
    amount: number,
    status: 'Success' | 'Failed' | 'Pending',
    secretKey: string,
    failureReason?: string,
  ) => {
    const p = payments.create({
      ref,
      origin: 'direct',
      type: 'Bank',
      amount,
      merchantAmount: amount,
      fee: 0,
      currency: 'NGN',
      email: String(m.record.customer_email),
      customerName: String(m.record.customer_name),
      meta: { mandate_id: m.record.mandate_id },
      isRecurring: false,
      key: secretKey,
      status,
      bank: { account: String(m.record.account_number), bankCode: String(m.record.bank) },
    });
    if (failureReason) p.failureReason = failureReason;
    return p;
  };
  const apply = (m: Mandate, ref: string, amount: number) => {
    m.record.balance = (m.record.balance as number) - amount;
    m.record.total_debited = (m.record.total_debited as number) + amount;
    ledger.record('mandate_debit', ref, amount, 'NGN');
  };
  const mandates = new Map<string, Mandate>(); // by mandate_id, creation order
  const bySession = new Map<string, string>();
  const debitRefs = new Set<string>();
  /** The service's own FIXED debits: one per (mandate, scheduled date), on the sandbox clock. */
  const fixedDebits = new FixedDebits(clock, (mandateId, ref, date) => debitScheduledDate(mandateId, ref, date));

  /** One scheduled date of a FIXED mandate, debited by the service itself (no D3); refused as D3 would be. */
  const debitScheduledDate = (mandateId: string, ref: string, date: string): FixedDebitRecord | undefined => {
    const m = mandates.get(mandateId);
    if (!m?.fixed || m.record.status !== 'approved' || m.record.ready_to_debit !== true) return undefined;
    const amount = m.fixed.amount;
    debitRefs.add(ref);
    if (amount > (m.record.balance as number)) {
      const reason = 'Mandate balance is lesser than debit amount';
      recordTransaction(m, ref, amount, 'Failed', m.secretKey, reason);
      return { date, reference: ref, amount, status: 'failed', failureReason: reason, at: clock.iso() };
    }
    apply(m, ref, amount);
    recordTransaction(m, ref, amount, 'Success', m.secretKey);
    return { date, reference: ref, amount, status: 'success', at: clock.iso() };
  };

  router.add('POST', '/transaction/mandate/create', 'mandate', D1_FIELDS, ({ body, secretKey }) => {
    const debitType = String(body.debit_type).toLowerCase();
    const info = asObject(body.customerInformation);
    const fixed = debitType === 'fixed' ? asObject(body.fixedMandateSettings) : undefined;
    const email = String(body.customer_email).toLowerCase();
    for (const m of mandates.values()) {
      if (String(m.record.customer_email).toLowerCase() === email && m.record.status !== 'cancelled')
        return fail(400, 'Customer already exists with the same email address.');
    }
    const reference =
      body.transaction_reference === undefined || body.transaction_reference === ''
        ? `MREF${randomDigits(12)}`
        : String(body.transaction_reference);
    if ([...mandates.values()].some((m) => m.record.reference === reference))
      return fail(400, 'Duplicate transaction reference');

    const mandateId = `MD${randomDigits(10)}`;
    const sessionToken = randomUUID();
    const now = clock.now();
    const name = `${String(info.firstName)} ${String(info.lastName)}`;
    const record: Record<string, unknown> = {
      id: randomUUID(),
      mandate_id: mandateId,
      mandate_reference_number: null,
      mandate_type: 'emandate',
      debit_type: debitType,
      status: 'initiated',
      approved: false,
      is_approved: false,
      ready_to_debit: false,
      reference,
      merchant_reference: reference,
      account_number: String(body.account_number),
      account_name: name,
      bank: String(body.bank_code),
      bankName: String(body.bank_code) === '058' ? PARTNER_BANK_NAME : `Sandbox Bank ${String(body.bank_code)}`,
      description: String(body.description),
      start_date: body.start_date,
      end_date: body.end_date,
      amount: body.amount,
      balance: body.amount,
      total_debited: 0,
      customer_email: String(body.customer_email),
      customer_name: name,
      mandate_authorization_date: null,
      created_at: clock.iso(now),
      frequency: fixed ? String(fixed.frequency).toUpperCase() : null,
      initial_debit_amount: fixed ? fixed.initial_debit_amount : null,
      merchant_id: MERCHANT_ID,
    };
    mandates.set(mandateId, {
      record,
      sessionToken,
      sessionExpiresAt: now + MANDATE_SESSION_MS,
      wrongOtps: 0,
      createdAt: now,
      secretKey,
      ...(fixed
        ? {
            fixed: {
              frequency: String(fixed.frequency).toUpperCase() as 'MONTHLY' | 'WEEKLY' | 'YEARLY',
              interval: fixed.interval as number,
              initialDebitDate: String(fixed.initial_debit_date),
              amount: fixed.initial_debit_amount as number,
            },
          }
        : {}),
    });
    bySession.set(sessionToken, mandateId);
    return ok(
      {
        ...record,
        message: 'An OTP has been sent to the customer phone',
        date: clock.iso(now),
        next_action: 'send_otp',
        session_token: sessionToken,
      },
      'Mandate created successfully',
    );
  });

  const bySessionToken = (token: unknown): Mandate | undefined => {
    const id = typeof token === 'string' ? bySession.get(token) : undefined;
    return id ? mandates.get(id) : undefined;
  };

  router.add('POST', '/transaction/mandate/validate-otp', 'mandate', D2_FIELDS, ({ body }) => {
    const m = bySessionToken(body.session_token);
    if (
      !m ||
      m.record.status !== 'initiated' ||
      clock.now() > m.sessionExpiresAt ||
      m.wrongOtps >= MANDATE_MAX_WRONG_OTP
    )
      return fail(424, 'Invalid or expired session.');
    if (String(body.otp) !== MANDATE_OTP) {
      m.wrongOtps += 1;
      if (wrongOtpStatus === 424) return fail(424, 'Invalid or expired session.');
      return fail(
        400,
        m.wrongOtps >= MANDATE_MAX_WRONG_OTP ? 'Invalid OTP: too many wrong attempts, resend the OTP' : 'Invalid OTP',
      );
    }
    Object.assign(m.record, {
      status: 'approved',
      approved: true,
      is_approved: true,
      ready_to_debit: true,
      mandate_reference_number: `MRN${randomDigits(12)}`,
      mandate_authorization_date: clock.iso(),
    });
    if (m.fixed)
      fixedDebits.start({
        mandateId: String(m.record.mandate_id),
        schedule: m.fixed,
        endDate: String(m.record.end_date),
        approvedAt: clock.now(),
      });
    return ok(
      {
        mandate_id: m.record.mandate_id,
        mandate_reference_number: m.record.mandate_reference_number,
        status: 'approved',
        ready_to_debit: true,
      },
      'Mandate approved',
    );
  });

  router.add('POST', '/transaction/mandate/resend-otp', 'mandate', D6_FIELDS, ({ body }) => {
    const m = bySessionToken(body.session_token);
    if (!m || m.record.status !== 'initiated') return fail(424, 'Invalid or expired session.');
    m.sessionExpiresAt = clock.now() + MANDATE_SESSION_MS; // a new OTP, a new window
    m.wrongOtps = 0;
    return ok({}, 'OTP resent');
  });

  router.add('POST', '/transaction/mandate/debit', 'mandate', D3_FIELDS, ({ body, secretKey }) => {
    const m = mandates.get(String(body.mandate_id));
    if (!m) return fail(404, `No mandate found for reference ${String(body.mandate_id)}`);
    const amount = body.amount as number;
    if (m.record.status !== 'approved' || m.record.ready_to_debit !== true)
      return fail(400, 'Mandate is not ready for debit');
    const ref = String(body.transaction_reference);
    if (debitRefs.has(ref)) return fail(400, 'Duplicate transaction reference');
    if (amount > (m.record.balance as number)) return fail(400, 'Mandate balance is lesser than debit amount');
    debitRefs.add(ref);
    const outcome = scripted.get(String(m.record.mandate_id))?.shift();
    if (outcome === 'failed') recordTransaction(m, ref, amount, 'Failed', secretKey, 'Debit failed at the bank');
    else if (outcome === 'pending') {
      recordTransaction(m, ref, amount, 'Pending', secretKey);
      pendingDebits.set(ref, { mandateId: String(m.record.mandate_id), amount });
    } else {
      apply(m, ref, amount);
      recordTransaction(m, ref, amount, 'Success', secretKey);
    }
    return ok(
      {
        status: outcome ?? 'success',
        aamount: amount, // sic: the spec's sample spells the key this way
        mandate_id: m.record.mandate_id,
        transaction_reference: ref,
        date: clock.iso(),
        account: {
          bank_code: m.record.bank,
          account_name: m.record.account_name,
          account_number: m.record.account_number,
          bank_name: m.record.bankName,
        },
      },
      outcome === 'failed' ? 'Debit failed' : outcome === 'pending' ? 'Debit is being processed' : 'Debit successful',
    );
  });

  router.add('POST', '/transaction/mandate/cancel', 'mandate', D4_FIELDS, ({ body }) => {
    const ids = Array.isArray(body.mandateIds) ? body.mandateIds.map(String) : [String(body.mandateIds)];
    const canceledMandates: string[] = [];
    const failedMandates: { mandateId: string; failureReason: string }[] = [];
    for (const id of ids) {
      const m = mandates.get(id);
      if (!m) failedMandates.push({ mandateId: id, failureReason: 'Mandate not found' });
      else if (m.record.status === 'cancelled')
        failedMandates.push({ mandateId: id, failureReason: 'Mandate already cancelled' });
      else {
        Object.assign(m.record, { status: 'cancelled', ready_to_debit: false });
        fixedDebits.stop(id);
        canceledMandates.push(id);
      }
    }
    return ok({ canceledMandates, failedMandates }, 'Mandate cancellation processed');
  });

  router.add('GET', '/transaction/mandate/get-mandates', 'mandate', D5_FIELDS, ({ query }) => {
    let rows = [...mandates.values()];
    for (const f of [
      'status',
      'mandate_id',
      'account_number',
      'customer_name',
      'mandate_type',
      'debit_type',
    ] as const) {
      const v = query.get(f);
      if (v !== null && v !== '') rows = rows.filter((m) => String(m.record[f]).toLowerCase() === v.toLowerCase());
    }
    for (const f of ['is_approved', 'ready_to_debit'] as const) {
      const v = query.get(f);
      if (v !== null && v !== '') rows = rows.filter((m) => String(m.record[f]) === v.toLowerCase());
    }
    const amount = query.get('amount');
    if (amount) rows = rows.filter((m) => String(m.record.amount) === amount);
    for (const f of ['start_date', 'end_date'] as const) {
      const v = query.get(f);
      if (v && !DATE.test(v)) return fail(400, `${f} must be YYYY-MM-DD`);
    }
    // start_date / end_date select mandates by creation day (sandbox clock), both inclusive.
    const from = query.get('start_date');
    const to = query.get('end_date');
    if (from) rows = rows.filter((m) => String(m.record.created_at).slice(0, 10) >= from);
    if (to) rows = rows.filter((m) => String(m.record.created_at).slice(0, 10) <= to);
    const ref = query.get('merchant_ref');
    if (ref !== null && ref !== '') {
      rows = rows.filter((m) => m.record.reference === ref);
      // As the spec shows it: HTTP 404 with status 400 in the body.
      if (rows.length === 0)
        return {
          status: 404,
          body: { status: 400, success: false, message: `No mandate found for reference ${ref}`, data: null },
        };
    }
    const pageSize = Math.min(Math.max(Number(query.get('page_size') ?? 20) || 20, 1), 100);
    const cursorText = query.get('cursor') ?? query.get('next_cursor') ?? query.get('prev_cursor');
    const cursor = cursorText === null ? 0 : Number(cursorText);
    if (!Number.isSafeInteger(cursor) || cursor < 0) return fail(400, 'cursor is invalid');
    const slice = rows.slice(cursor, cursor + pageSize).map((m) => ({ ...m.record }));
    const hasMore = cursor + pageSize < rows.length;
    return ok({
      records: slice,
      next_cursor: hasMore ? String(cursor + pageSize) : null,
      prev_cursor: cursor > 0 ? String(Math.max(cursor - pageSize, 0)) : null,
      has_more: hasMore,
      page_size: pageSize,
    });
  });

  return {
    scheduledDebits(mandateId) {
      if (!mandates.has(mandateId)) return fail(404, `No mandate found for reference ${mandateId}`);
      return ok(fixedDebits.list(mandateId));
    },
    setWrongOtpStatus(status) {
      if (status !== 400 && status !== 424) return fail(400, 'status must be 400 or 424');
      wrongOtpStatus = status;
      return ok({ wrongOtpStatus });
    },
    scriptDebits(mandateId, outcomes) {
      if (!mandates.has(mandateId)) return fail(404, `No mandate found for reference ${mandateId}`);
      if (
        !Array.isArray(outcomes) ||
        outcomes.some((o) => !(MANDATE_DEBIT_OUTCOMES as readonly unknown[]).includes(o))
      ) {
        return fail(400, `outcomes must be an array of ${MANDATE_DEBIT_OUTCOMES.join(' | ')}`);
      }
      scripted.set(mandateId, [...(scripted.get(mandateId) ?? []), ...(outcomes as MandateDebitOutcome[])]);
      return ok({ mandate_id: mandateId, scripted: scripted.get(mandateId) });
    },
    settleDebit(reference, status) {
      const pending = pendingDebits.get(reference);
      const p = payments.get(reference);
      if (!pending || !p) return fail(404, `No pending mandate debit ${reference}`);
      if (status !== 'success' && status !== 'failed') return fail(400, 'status must be success or failed');
      pendingDebits.delete(reference);
      const m = mandates.get(pending.mandateId)!;
      if (status === 'success' && pending.amount <= (m.record.balance as number)) {
        apply(m, reference, pending.amount);
        p.status = 'Success';
      } else {
        p.status = 'Failed';
        p.failureReason =
          status === 'success' ? 'Mandate balance is lesser than debit amount' : 'Debit failed at the bank';
      }
      p.updatedAt = clock.now();
      return ok({ transaction_ref: reference, transaction_status: p.status });
    },
    reject(mandateId) {
      const m = mandates.get(mandateId);
      if (!m) return fail(404, `No mandate found for reference ${mandateId}`);
      if (m.record.status !== 'initiated') return fail(400, `Mandate is ${String(m.record.status)}`);
      Object.assign(m.record, { status: 'rejected', approved: false, is_approved: false, ready_to_debit: false });
      fixedDebits.stop(mandateId);
      return ok({ mandate_id: mandateId, status: 'rejected' });
    },
  };
}
