// Direct-debit mandates (D1-D6): created initiated, approved with the OTP inside a session,
// debited down to their balance, cancelled (idempotently reported), listed with cursors.
import { randomUUID } from 'node:crypto';
import { fail, ok, randomDigits, requireFields, type SandboxCore } from './core';

export const MANDATE_OTP = '123456';
export const MANDATE_SESSION_MS = 10 * 60 * 1000;
export const MANDATE_MIN_DEBIT = 20_000; // N200 in kobo

interface Mandate {
  record: Record<string, unknown>;
  sessionToken: string;
  sessionExpiresAt: number;
  debitRefs: Set<string>;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function registerMandates(core: SandboxCore) {
  const mandates = new Map<string, Mandate>();
  const bySession = new Map<string, string>();

  core.route('POST', '/transaction/mandate/create', 'direct', ({ body }) => {
    const missing = requireFields(body, ['mandate_type', 'debit_type', 'amount', 'account_number', 'bank_code', 'description', 'start_date', 'end_date', 'customer_email', 'customerInformation']);
    if (missing) return missing;
    const debitType = String(body.debit_type).toLowerCase();
    if (body.mandate_type !== 'emandate') return fail(400, 'mandate_type must be emandate');
    if (!['variable', 'fixed'].includes(debitType)) return fail(400, 'debit_type must be VARIABLE or FIXED');
    if (typeof body.amount !== 'number' || !Number.isSafeInteger(body.amount) || body.amount <= 0) return fail(400, 'amount must be an integer in kobo');
    if (!/^\d{10}$/.test(String(body.account_number))) return fail(400, 'account_number must be 10 digits');
    if (!DATE.test(String(body.start_date)) || !DATE.test(String(body.end_date))) return fail(400, 'start_date and end_date must be YYYY-MM-DD');
    const info = body.customerInformation as Record<string, unknown>;
    const infoMissing = requireFields(info ?? {}, ['identity', 'firstName', 'lastName', 'address', 'phone']);
    if (infoMissing) return fail(400, `customerInformation.${(infoMissing.body as { message: string }).message}`);
    let fixed: Record<string, unknown> | undefined;
    if (debitType === 'fixed') {
      fixed = body.fixedMandateSettings as Record<string, unknown> | undefined;
      if (!fixed) return fail(400, 'fixedMandateSettings is required');
      if (!['MONTHLY', 'WEEKLY', 'YEARLY'].includes(String(fixed.frequency))) return fail(400, 'fixedMandateSettings.frequency must be MONTHLY, WEEKLY or YEARLY');
      if (!Number.isSafeInteger(fixed.interval) || (fixed.interval as number) < 1) return fail(400, 'fixedMandateSettings.interval must be a positive integer');
      if (!Number.isSafeInteger(fixed.initial_debit_amount)) return fail(400, 'fixedMandateSettings.initial_debit_amount must be an integer');
      if (!DATE.test(String(fixed.initial_debit_date))) return fail(400, 'fixedMandateSettings.initial_debit_date must be YYYY-MM-DD');
    }
    const email = String(body.customer_email).toLowerCase();
    for (const m of mandates.values()) {
      if (String(m.record.customer_email).toLowerCase() === email && m.record.status !== 'cancelled') {
        return fail(400, 'Customer already exists with the same email address.');
      }
    }
    const mandateId = `MD${randomDigits(10)}`;
    const sessionToken = randomUUID();
    const now = core.clock.iso();
    const record: Record<string, unknown> = {
      id: randomUUID(), mandate_id: mandateId, mandate_type: 'emandate', debit_type: debitType, status: 'initiated', approved: false, is_approved: false, ready_to_debit: false,
      reference: body.transaction_reference ?? `MREF${randomDigits(10)}`, account_number: String(body.account_number), account_name: `${info.firstName} ${info.lastName}`,
      bank: String(body.bank_code), bankName: 'Sandbox Partner Bank', description: body.description, start_date: body.start_date, end_date: body.end_date,
      amount: body.amount, balance: body.amount, total_debited: 0, customer_email: body.customer_email, customer_name: `${info.firstName} ${info.lastName}`,
      created_at: now, merchant_id: 'SBXMERCHANT', frequency: fixed?.frequency ?? null, initial_debit_amount: fixed?.initial_debit_amount ?? null,
    };
    record.merchant_reference = record.reference;
    mandates.set(mandateId, { record, sessionToken, sessionExpiresAt: core.clock.now() + MANDATE_SESSION_MS, debitRefs: new Set() });
    bySession.set(sessionToken, mandateId);
    return ok({ ...record, message: 'OTP sent to customer phone', date: now, next_action: 'send_otp', session_token: sessionToken }, 'Mandate created');
  });

  const session = (token: unknown) => {
    const id = typeof token === 'string' ? bySession.get(token) : undefined;
    const m = id ? mandates.get(id) : undefined;
    if (!m || core.clock.now() > m.sessionExpiresAt || m.record.status !== 'initiated') return undefined;
    return m;
  };

  core.route('POST', '/transaction/mandate/validate-otp', 'direct', ({ body }) => {
    const missing = requireFields(body, ['session_token', 'otp']);
    if (missing) return missing;
    const m = session(body.session_token);
    if (!m) return fail(424, 'Invalid or expired session.');
    if (String(body.otp) !== MANDATE_OTP) return fail(400, 'Invalid OTP');
    Object.assign(m.record, { status: 'approved', approved: true, is_approved: true, ready_to_debit: true, mandate_reference_number: `MRN${randomDigits(12)}`, mandate_authorization_date: core.clock.iso() });
    return ok({ mandate_id: m.record.mandate_id, mandate_reference_number: m.record.mandate_reference_number, status: 'approved', ready_to_debit: true }, 'Mandate approved');
  });

  core.route('POST', '/transaction/mandate/resend-otp', 'direct', ({ body }) => {
    const missing = requireFields(body, ['session_token']);
    if (missing) return missing;
    const id = typeof body.session_token === 'string' ? bySession.get(body.session_token) : undefined;
    const m = id ? mandates.get(id) : undefined;
    if (!m || m.record.status !== 'initiated') return fail(424, 'Invalid or expired session.');
    m.sessionExpiresAt = core.clock.now() + MANDATE_SESSION_MS; // a new OTP window
    return ok({}, 'OTP resent');
  });

  core.route('POST', '/transaction/mandate/debit', 'direct', ({ body }) => {
    const missing = requireFields(body, ['amount', 'mandate_id', 'transaction_reference']);
    if (missing) return missing;
    const m = mandates.get(String(body.mandate_id));
    if (!m) return fail(404, `No mandate found for reference ${String(body.mandate_id)}`);
    const amount = body.amount;
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount)) return fail(400, 'amount must be an integer in kobo');
    if (m.record.status !== 'approved' || !m.record.ready_to_debit) return fail(400, 'Mandate is not ready for debit');
    if (amount < MANDATE_MIN_DEBIT) return fail(400, 'Minimum amount for direct debit is N200.');
    const ref = String(body.transaction_reference);
    if (m.debitRefs.has(ref)) return fail(400, 'Duplicate transaction reference');
    if (amount > (m.record.balance as number)) return fail(400, 'Mandate balance is lesser than debit amount');
    m.debitRefs.add(ref);
    m.record.balance = (m.record.balance as number) - amount;
    m.record.total_debited = (m.record.total_debited as number) + amount;
    core.record('mandate_debit', ref, amount, 'NGN');
    return ok({
      status: 'success', aamount: amount, mandate_id: m.record.mandate_id, transaction_reference: ref, date: core.clock.iso(),
      account: { bank_code: m.record.bank, account_name: m.record.account_name, account_number: m.record.account_number, bank_name: m.record.bankName },
    }, 'Debit successful');
  });

  core.route('POST', '/transaction/mandate/cancel', 'direct', ({ body }) => {
    const ids = Array.isArray(body.mandateIds) ? body.mandateIds.map(String) : [];
    if (ids.length === 0) return fail(400, 'mandateIds is required');
    const canceledMandates: string[] = [];
    const failedMandates: { mandateId: string; failureReason: string }[] = [];
    for (const id of ids) {
      const m = mandates.get(id);
      if (!m) failedMandates.push({ mandateId: id, failureReason: 'Mandate not found' });
      else if (m.record.status === 'cancelled') failedMandates.push({ mandateId: id, failureReason: 'Mandate already cancelled' });
      else {
        Object.assign(m.record, { status: 'cancelled', ready_to_debit: false });
        canceledMandates.push(id);
      }
    }
    return ok({ canceledMandates, failedMandates }, 'Processed');
  });

  core.route('GET', '/transaction/mandate/get-mandates', 'direct', ({ query }) => {
    const filters = ['status', 'mandate_id', 'account_number', 'customer_name', 'mandate_type', 'debit_type'] as const;
    let rows = [...mandates.values()].map((m) => m.record);
    for (const f of filters) {
      const v = query.get(f);
      if (v !== null) rows = rows.filter((r) => String(r[f]).toLowerCase() === v.toLowerCase());
    }
    const ref = query.get('merchant_ref');
    if (ref !== null) {
      rows = rows.filter((r) => r.reference === ref);
      if (rows.length === 0) return { status: 404, body: { status: 400, success: false, message: `No mandate found for reference ${ref}`, data: null } };
    }
    for (const f of ['is_approved', 'ready_to_debit'] as const) {
      const v = query.get(f);
      if (v !== null) rows = rows.filter((r) => String(r[f]) === v);
    }
    const pageSize = Math.min(Math.max(Number(query.get('page_size') ?? 20) || 20, 1), 100);
    const cursor = Number(query.get('cursor') ?? 0) || 0;
    const page = rows.slice(cursor, cursor + pageSize);
    const hasMore = cursor + pageSize < rows.length;
    return ok({ records: page, next_cursor: hasMore ? String(cursor + pageSize) : null, prev_cursor: cursor > 0 ? String(Math.max(cursor - pageSize, 0)) : null, has_more: hasMore, page_size: pageSize });
  });
}
