// Direct-debit mandates (D): created initiated (D1), approved with the OTP inside a session on the
// sandbox clock (D2; resent, D6), debited down to their balance (D3), cancelled with an
// idempotent report (D4), listed with filters and cursors (D5).
// Every accepted debit is also a transaction known to verify (GET /transaction/verify/{ref}) under
// its transaction_reference (docs/sandbox.md): Success, Failed, or Pending until the admin settles
// it. The admin can script the next debit answers of a mandate: 200 with status pending or failed.
// An approved FIXED mandate is debited by the sandbox itself on each scheduled date (sandbox clock),
// as the service does: no debit request names those debits (docs/sandbox.md, docs/choices.md).
import { randomUUID } from 'node:crypto';
import type { SandboxClock } from './clock';
import { FixedDebits, type FixedDebitRecord } from './fixed-debits';
import { z } from 'zod';
import {
  addRoutes,
  asObject,
  fail,
  inDays,
  MERCHANT_ID,
  ok,
  pageSize,
  randomDigits,
  type Reply,
  type RequestContext,
  type Router,
} from './http';
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
/** The OTP session lasts this long on the sandbox clock; a resend opens a new window. */
export const MANDATE_SESSION_MS = 10 * 60 * 1000;
/** N200 in kobo. */
export const MANDATE_MIN_DEBIT = 20_000;
/** The third wrong OTP ends the session (424 until a resend). */
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
  /** FIXED: the schedule the create gave (the service debits it on its own once approved). */
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
const CREATE_MANDATE_FIELDS: RouteFields = {
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
const APPROVE_MANDATE_FIELDS: RouteFields = { body: z.object({ session_token: text(), otp: CODE }) };
const RESEND_OTP_FIELDS: RouteFields = { body: z.object({ session_token: text() }) };
const DEBIT_MANDATE_FIELDS: RouteFields = {
  body: z.object({
    amount: positiveNumber('must be a positive integer in kobo'),
    mandate_id: identifier(),
    transaction_reference: identifier(),
  }),
  // The N200 minimum needs no mandate: a debit below it is refused before the mandate is looked up.
  rules: ({ body }) =>
    (body.amount as number) < MANDATE_MIN_DEBIT ? { message: 'Minimum amount for direct debit is N200.' } : undefined,
};
const CANCEL_MANDATES_FIELDS: RouteFields = {
  body: z.object({
    mandateIds: identifiers('must be a list of mandate ids'),
  }),
};
const flag = oneOf(['true', 'false'], 'must be true or false', true).optional();
const LIST_MANDATES_FIELDS: RouteFields = {
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
    start_date: ymd.optional(),
    end_date: ymd.optional(),
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
  /** Admin: the mandate's next debit calls answer 200 with these statuses (pending: held until settled; failed: no money moved). */
  scriptDebits(mandateId: string, outcomes: unknown): Reply;
  /** Admin: a pending debit becomes success (applied now, if the balance allows) or failed. */
  settleDebit(reference: string, status: unknown): Reply;
  /**
   * Admin: how the OTP validation answers a wrong OTP. 400 'Invalid OTP' (default; not shown in the spec), or 424
   * 'Invalid or expired session.' — the only validation error the spec documents — as a real service may.
   */
  setWrongOtpStatus(status: unknown): Reply;
}

/** The mandates and their debits: the state the handlers and the admin API share. */
class MandateBook implements MandatesApi {
  readonly mandates = new Map<string, Mandate>(); // by mandate_id, creation order
  readonly bySession = new Map<string, string>();
  readonly debitRefs = new Set<string>();
  /** Scripted debit answers per mandate id. */
  readonly scripted = new Map<string, MandateDebitOutcome[]>();
  wrongOtpStatus: 400 | 424 = 400;
  /** Pending debits: reference → mandate id and amount. */
  private readonly pendingDebits = new Map<string, { mandateId: string; amount: number }>();
  /** The service's own FIXED debits: one per (mandate, scheduled date), on the sandbox clock. */
  readonly fixedDebits: FixedDebits;

  constructor(
    readonly clock: SandboxClock,
    private readonly ledger: Ledger,
    private readonly payments: PaymentStore,
  ) {
    this.fixedDebits = new FixedDebits(clock, (mandateId, ref, date) => this.debitScheduledDate(mandateId, ref, date));
  }

  bySessionToken(token: unknown): Mandate | undefined {
    const id = typeof token === 'string' ? this.bySession.get(token) : undefined;
    return id ? this.mandates.get(id) : undefined;
  }

  /** The debit as a transaction verify knows (type Bank, no webhook). */
  recordTransaction(
    m: Mandate,
    ref: string,
    amount: number,
    status: 'Success' | 'Failed' | 'Pending',
    secretKey: string,
    failureReason?: string,
  ): void {
    const p = this.payments.create({
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
      key: secretKey,
      status,
      bank: { account: String(m.record.account_number), bankCode: String(m.record.bank) },
    });
    if (failureReason) p.failureReason = failureReason;
  }

  /** Money leaves the mandate's balance. */
  apply(m: Mandate, ref: string, amount: number): void {
    m.record.balance = (m.record.balance as number) - amount;
    m.record.total_debited = (m.record.total_debited as number) + amount;
    this.ledger.record('mandate_debit', ref, amount, 'NGN');
  }

  /** A requested debit held until the admin settles it. */
  hold(m: Mandate, ref: string, amount: number, secretKey: string): void {
    this.recordTransaction(m, ref, amount, 'Pending', secretKey);
    this.pendingDebits.set(ref, { mandateId: String(m.record.mandate_id), amount });
  }

  /** One scheduled date of a FIXED mandate, debited by the service itself (no debit request); refused as a requested debit would be. */
  private debitScheduledDate(mandateId: string, ref: string, date: string): FixedDebitRecord | undefined {
    const m = this.mandates.get(mandateId);
    if (!m?.fixed || m.record.status !== 'approved' || m.record.ready_to_debit !== true) return undefined;
    const amount = m.fixed.amount;
    this.debitRefs.add(ref);
    if (amount > (m.record.balance as number)) {
      const reason = 'Mandate balance is lesser than debit amount';
      this.recordTransaction(m, ref, amount, 'Failed', m.secretKey, reason);
      return { date, reference: ref, amount, status: 'failed', failureReason: reason, at: this.clock.iso() };
    }
    this.apply(m, ref, amount);
    this.recordTransaction(m, ref, amount, 'Success', m.secretKey);
    return { date, reference: ref, amount, status: 'success', at: this.clock.iso() };
  }

  /** The mandate, or the reply that names the id as unknown. */
  known(mandateId: string): Mandate | Reply {
    return this.mandates.get(mandateId) ?? fail(404, `No mandate found for reference ${mandateId}`);
  }

  scheduledDebits(mandateId: string): Reply {
    const m = this.known(mandateId);
    return 'record' in m ? ok(this.fixedDebits.list(mandateId)) : m;
  }

  setWrongOtpStatus(status: unknown): Reply {
    if (status !== 400 && status !== 424) return fail(400, 'status must be 400 or 424');
    this.wrongOtpStatus = status;
    return ok({ wrongOtpStatus: status });
  }

  scriptDebits(mandateId: string, outcomes: unknown): Reply {
    const m = this.known(mandateId);
    if (!('record' in m)) return m;
    if (!Array.isArray(outcomes) || outcomes.some((o) => !(MANDATE_DEBIT_OUTCOMES as readonly unknown[]).includes(o)))
      return fail(400, `outcomes must be an array of ${MANDATE_DEBIT_OUTCOMES.join(' | ')}`);
    const scripted = [...(this.scripted.get(mandateId) ?? []), ...(outcomes as MandateDebitOutcome[])];
    this.scripted.set(mandateId, scripted);
    return ok({ mandate_id: mandateId, scripted });
  }

  settleDebit(reference: string, status: unknown): Reply {
    const pending = this.pendingDebits.get(reference);
    const p = this.payments.get(reference);
    if (!pending || !p) return fail(404, `No pending mandate debit ${reference}`);
    if (status !== 'success' && status !== 'failed') return fail(400, 'status must be success or failed');
    this.pendingDebits.delete(reference);
    const m = this.mandates.get(pending.mandateId)!;
    if (status === 'success' && pending.amount <= (m.record.balance as number)) {
      this.apply(m, reference, pending.amount);
      p.status = 'Success';
    } else {
      p.status = 'Failed';
      p.failureReason =
        status === 'success' ? 'Mandate balance is lesser than debit amount' : 'Debit failed at the bank';
    }
    p.updatedAt = this.clock.now();
    return ok({ transaction_ref: reference, transaction_status: p.status });
  }

  reject(mandateId: string): Reply {
    const m = this.known(mandateId);
    if (!('record' in m)) return m;
    if (m.record.status !== 'initiated') return fail(400, `Mandate is ${String(m.record.status)}`);
    Object.assign(m.record, { status: 'rejected', approved: false, is_approved: false, ready_to_debit: false });
    this.fixedDebits.stop(mandateId);
    return ok({ mandate_id: mandateId, status: 'rejected' });
  }
}

/** A new mandate (D1), initiated, with an OTP session. */
function createMandate(book: MandateBook, { body, secretKey }: RequestContext): Reply {
  const email = String(body.customer_email).toLowerCase();
  const mandates = [...book.mandates.values()];
  if (mandates.some((m) => String(m.record.customer_email).toLowerCase() === email && m.record.status !== 'cancelled'))
    return fail(400, 'Customer already exists with the same email address.');
  const reference =
    body.transaction_reference === undefined || body.transaction_reference === ''
      ? `MREF${randomDigits(12)}`
      : String(body.transaction_reference);
  if (mandates.some((m) => m.record.reference === reference)) return fail(400, 'Duplicate transaction reference');
  const settings = asObject(body.fixedMandateSettings);
  const fixed: Mandate['fixed'] =
    String(body.debit_type).toLowerCase() === 'fixed'
      ? {
          frequency: String(settings.frequency).toUpperCase() as 'MONTHLY' | 'WEEKLY' | 'YEARLY',
          interval: settings.interval as number,
          initialDebitDate: String(settings.initial_debit_date),
          amount: settings.initial_debit_amount as number,
        }
      : undefined;
  const now = book.clock.now();
  const record = mandateRecord(body, reference, fixed, book.clock.iso(now));
  const sessionToken = randomUUID();
  book.mandates.set(String(record.mandate_id), {
    record,
    sessionToken,
    sessionExpiresAt: now + MANDATE_SESSION_MS,
    wrongOtps: 0,
    createdAt: now,
    secretKey,
    fixed,
  });
  book.bySession.set(sessionToken, String(record.mandate_id));
  return ok(
    {
      ...record,
      message: 'An OTP has been sent to the customer phone',
      date: book.clock.iso(now),
      next_action: 'send_otp',
      session_token: sessionToken,
    },
    'Mandate created successfully',
  );
}

/** The mandate as the create and the list show it. */
function mandateRecord(
  body: Record<string, unknown>,
  reference: string,
  fixed: Mandate['fixed'],
  createdAt: string,
): Record<string, unknown> {
  const info = asObject(body.customerInformation);
  const name = `${String(info.firstName)} ${String(info.lastName)}`;
  const bankCode = String(body.bank_code);
  return {
    id: randomUUID(),
    mandate_id: `MD${randomDigits(10)}`,
    mandate_reference_number: null,
    mandate_type: 'emandate',
    debit_type: String(body.debit_type).toLowerCase(),
    status: 'initiated',
    approved: false,
    is_approved: false,
    ready_to_debit: false,
    reference,
    merchant_reference: reference,
    account_number: String(body.account_number),
    account_name: name,
    bank: bankCode,
    bankName: bankCode === '058' ? PARTNER_BANK_NAME : `Sandbox Bank ${bankCode}`,
    description: String(body.description),
    start_date: body.start_date,
    end_date: body.end_date,
    amount: body.amount,
    balance: body.amount,
    total_debited: 0,
    customer_email: String(body.customer_email),
    customer_name: name,
    mandate_authorization_date: null,
    created_at: createdAt,
    frequency: fixed?.frequency ?? null,
    initial_debit_amount: fixed?.amount ?? null,
    merchant_id: MERCHANT_ID,
  };
}

/** The OTP approves the mandate (D2) (a FIXED one then starts its scheduled debits). */
function approveMandate(book: MandateBook, { body }: RequestContext): Reply {
  const m = book.bySessionToken(body.session_token);
  const clock = book.clock;
  if (!m || m.record.status !== 'initiated' || clock.now() > m.sessionExpiresAt || m.wrongOtps >= MANDATE_MAX_WRONG_OTP)
    return fail(424, 'Invalid or expired session.');
  if (String(body.otp) !== MANDATE_OTP) {
    m.wrongOtps += 1;
    if (book.wrongOtpStatus === 424) return fail(424, 'Invalid or expired session.');
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
    book.fixedDebits.start({
      mandateId: String(m.record.mandate_id),
      schedule: m.fixed,
      endDate: String(m.record.end_date),
      approvedAt: clock.now(),
    });
  const { mandate_id, mandate_reference_number } = m.record;
  return ok({ mandate_id, mandate_reference_number, status: 'approved', ready_to_debit: true }, 'Mandate approved');
}

/** A new OTP, a new window (D6). */
function resendOtp(book: MandateBook, { body }: RequestContext): Reply {
  const m = book.bySessionToken(body.session_token);
  if (!m || m.record.status !== 'initiated') return fail(424, 'Invalid or expired session.');
  m.sessionExpiresAt = book.clock.now() + MANDATE_SESSION_MS;
  m.wrongOtps = 0;
  return ok({}, 'OTP resent');
}

/** A debit down to the balance (D3), answered as the admin scripted it (success unless said). */
function debitMandate(book: MandateBook, { body, secretKey }: RequestContext): Reply {
  const m = book.known(String(body.mandate_id));
  if (!('record' in m)) return m;
  const amount = body.amount as number;
  if (m.record.status !== 'approved' || m.record.ready_to_debit !== true)
    return fail(400, 'Mandate is not ready for debit');
  const ref = String(body.transaction_reference);
  if (book.debitRefs.has(ref)) return fail(400, 'Duplicate transaction reference');
  if (amount > (m.record.balance as number)) return fail(400, 'Mandate balance is lesser than debit amount');
  book.debitRefs.add(ref);
  const outcome = book.scripted.get(String(m.record.mandate_id))?.shift();
  if (outcome === 'failed') book.recordTransaction(m, ref, amount, 'Failed', secretKey, 'Debit failed at the bank');
  else if (outcome === 'pending') book.hold(m, ref, amount, secretKey);
  else {
    book.apply(m, ref, amount);
    book.recordTransaction(m, ref, amount, 'Success', secretKey);
  }
  return ok(
    {
      status: outcome ?? 'success',
      aamount: amount, // sic: the spec's sample spells the key this way
      mandate_id: m.record.mandate_id,
      transaction_reference: ref,
      date: book.clock.iso(),
      account: {
        bank_code: m.record.bank,
        account_name: m.record.account_name,
        account_number: m.record.account_number,
        bank_name: m.record.bankName,
      },
    },
    outcome === 'failed' ? 'Debit failed' : outcome === 'pending' ? 'Debit is being processed' : 'Debit successful',
  );
}

/** Cancels each mandate named (D4), reporting those it could not. */
function cancelMandates(book: MandateBook, { body }: RequestContext): Reply {
  const ids = Array.isArray(body.mandateIds) ? body.mandateIds.map(String) : [String(body.mandateIds)];
  const canceledMandates: string[] = [];
  const failedMandates: { mandateId: string; failureReason: string }[] = [];
  for (const id of ids) {
    const m = book.mandates.get(id);
    if (!m) failedMandates.push({ mandateId: id, failureReason: 'Mandate not found' });
    else if (m.record.status === 'cancelled')
      failedMandates.push({ mandateId: id, failureReason: 'Mandate already cancelled' });
    else {
      Object.assign(m.record, { status: 'cancelled', ready_to_debit: false });
      book.fixedDebits.stop(id);
      canceledMandates.push(id);
    }
  }
  return ok({ canceledMandates, failedMandates }, 'Mandate cancellation processed');
}

/** The mandate list's filters, in the spec's order; a reply when the query cannot be answered. */
function filterMandates(rows: Mandate[], query: URLSearchParams): Mandate[] | Reply {
  const given = (f: string) => {
    const v = query.get(f);
    return v === null || v === '' ? undefined : v;
  };
  for (const f of ['status', 'mandate_id', 'account_number', 'customer_name', 'mandate_type', 'debit_type']) {
    const v = given(f)?.toLowerCase();
    if (v !== undefined) rows = rows.filter((m) => String(m.record[f]).toLowerCase() === v);
  }
  for (const f of ['is_approved', 'ready_to_debit']) {
    const v = given(f)?.toLowerCase();
    if (v !== undefined) rows = rows.filter((m) => String(m.record[f]) === v);
  }
  const amount = given('amount');
  if (amount) rows = rows.filter((m) => String(m.record.amount) === amount);
  // start_date / end_date select mandates by creation day (sandbox clock), both inclusive.
  rows = rows.filter((m) => inDays(String(m.record.created_at), query, 'start_date', 'end_date'));
  const ref = given('merchant_ref');
  if (ref === undefined) return rows;
  rows = rows.filter((m) => m.record.reference === ref);
  // As the spec shows it: HTTP 404 with status 400 in the body.
  if (rows.length === 0)
    return {
      status: 404,
      body: { status: 400, success: false, message: `No mandate found for reference ${ref}`, data: null },
    };
  return rows;
}

/** The mandates (D5), filtered, a page at a time by cursor. */
function listMandates(book: MandateBook, { query }: RequestContext): Reply {
  const rows = filterMandates([...book.mandates.values()], query);
  if (!Array.isArray(rows)) return rows;
  const size = pageSize(query, 'page_size', 20);
  const cursorText = query.get('cursor') ?? query.get('next_cursor') ?? query.get('prev_cursor');
  const cursor = cursorText === null ? 0 : Number(cursorText); // the fields allow digits only
  const hasMore = cursor + size < rows.length;
  return ok({
    records: rows.slice(cursor, cursor + size).map((m) => ({ ...m.record })),
    next_cursor: hasMore ? String(cursor + size) : null,
    prev_cursor: cursor > 0 ? String(Math.max(cursor - size, 0)) : null,
    has_more: hasMore,
    page_size: size,
  });
}

export function registerMandates(
  router: Router,
  deps: { clock: SandboxClock; ledger: Ledger; payments: PaymentStore },
): MandatesApi {
  const book = new MandateBook(deps.clock, deps.ledger, deps.payments);
  addRoutes(router, 'mandate', book, [
    ['POST', '/transaction/mandate/create', CREATE_MANDATE_FIELDS, createMandate],
    ['POST', '/transaction/mandate/validate-otp', APPROVE_MANDATE_FIELDS, approveMandate],
    ['POST', '/transaction/mandate/resend-otp', RESEND_OTP_FIELDS, resendOtp],
    ['POST', '/transaction/mandate/debit', DEBIT_MANDATE_FIELDS, debitMandate],
    ['POST', '/transaction/mandate/cancel', CANCEL_MANDATES_FIELDS, cancelMandates],
    ['GET', '/transaction/mandate/get-mandates', LIST_MANDATES_FIELDS, listMandates],
  ]);
  return book;
}
