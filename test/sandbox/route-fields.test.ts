// Fields before lookups, for every route of the sandbox (issue #26 §4). The walk reads the
// sandbox's own route table, so a route added later is walked too: for each route it fills every
// identifier it can with an id the sandbox has never issued, leaves (or makes) one field bad, and
// sends that over HTTP. The answer must be the field error (400, naming the field), never what a
// lookup of the unknown id would answer (404, 'not found', 424 'Invalid or expired session', ...).
// Then business rules before lookups (issue #44 §4): the table RULES gives, for every route, a
// request that breaks one of its lookup-free rules (minimum, maximum, allowed value, date order,
// format) about an unknown id and the rule's error; or says why the route has no such rule.
import { z } from 'zod';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { Router } from '../../src/sandbox/http';
import { firstFieldError, type RouteFields } from '../../src/sandbox/validation';
import { call } from './helpers';

/** Ids of every shape the sandbox issues (reference, account number, uuid), none of them issued. */
const UNKNOWN_IDS = ['UNKNOWN0000000000000', '0000000000', '00000000-0000-4000-8000-000000000000'];
/** Values no field rule accepts: a malformed id in a path or query, an object where a value goes in a body. */
const BAD_TEXT = ['!not valid!', 'x'.repeat(120)];
const BAD_VALUE = { not: 'a value' };

const UNKNOWN_REF = UNKNOWN_IDS[0]!;
const UNKNOWN_ACCOUNT = UNKNOWN_IDS[1]!;
const UNKNOWN_UUID = UNKNOWN_IDS[2]!;

interface Sent {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
}
/** A request breaking one lookup-free rule, its error, and what the same request answers with the rule kept. */
interface RuleRow extends Sent {
  rule: string;
  status: number;
  message: string;
  /** The rule kept (these fields changed): the lookup's own answer, proving the id was looked up. */
  kept?: Sent & { status: number; message?: string };
}
/** A route with no lookup-free rule beyond its fields' formats: why. */
interface NoRuleRow {
  none: string;
}

const CARD = { cvv: '123', expiry_month: '12', expiry_year: '39' };
const MANDATE = {
  mandate_type: 'emandate',
  debit_type: 'variable',
  amount: 500_000,
  account_number: '0123456789',
  bank_code: '058',
  description: 'Gym membership',
  start_date: '2026-12-01',
  end_date: '2027-12-01',
  customer_email: 'rule-walk@example.com',
  transaction_reference: UNKNOWN_REF,
  customerInformation: {
    identity: { type: 'bvn', number: '22222222222' },
    firstName: 'Ada',
    lastName: 'Walker',
    address: '1 Sandbox Way',
    phone: '08012345678',
  },
};
const POS_TXN = {
  terminal_id: UNKNOWN_REF,
  amount: '5000',
  currency: 'NGN',
  card_pan: '5399830000000000',
  card_expiry_month: '12',
  card_expiry_year: '39',
  card_sequence_number: '001',
  transaction_type: 'Purchase',
  account_type: 'DEFAULT',
  merchant_ref: 'UNKNOWN0000000000001',
};
const NO_LOOKUP = 'names nothing to look up';

/** Every route of the sandbox: a rule-breaking request about an unknown id, or why there is none. */
const RULES: Record<string, RuleRow | NoRuleRow> = {
  'POST /transaction/initiate': {
    rule: 'currency is NGN or USD',
    body: {
      amount: 50_000,
      email: 'payer@example.com',
      currency: 'EUR',
      initiate_type: 'inline',
      transaction_ref: UNKNOWN_REF,
    },
    status: 400,
    message: 'currency must be NGN or USD',
    kept: { body: { currency: 'NGN' }, status: 200 },
  },
  'GET /checkout/{ref}': { none: "takes only the checkout's reference (its format is the field walk's)" },
  'POST /checkout/{ref}/card': {
    rule: "the card's own values (Luhn number, cvv, expiry)",
    params: { ref: UNKNOWN_REF },
    body: { ...CARD, number: '4111111111111112' },
    status: 400,
    message: 'Invalid card number',
    kept: { body: { number: '4111111111111111' }, status: 404, message: 'Checkout not found' },
  },
  'POST /checkout/{ref}/authorize': { none: 'the PIN or OTP is checked against the card payment in progress' },
  'POST /checkout/{ref}/bank': {
    rule: 'bank debit only at the partner bank',
    params: { ref: UNKNOWN_REF },
    body: { account_or_phoneno: '0123456789', bank_code: '044' },
    status: 400,
    message: 'Bank debit is only available for bank_code 058',
    kept: { body: { bank_code: '058' }, status: 404, message: 'Checkout not found' },
  },
  'POST /checkout/{ref}/bank/validate': { none: 'the code is checked against the bank payment in progress' },
  'POST /checkout/{ref}/ussd': {
    rule: 'bank_code is one of the USSD banks',
    params: { ref: UNKNOWN_REF },
    body: { bank_code: '999' },
    status: 400,
    message: 'bank_code is not a supported USSD bank code',
    kept: { body: { bank_code: '058' }, status: 404, message: 'Checkout not found' },
  },
  'POST /checkout/{ref}/transfer': { none: "takes only the checkout's reference" },
  'POST /transaction/initiate/process-payment': {
    rule: 'direct bank debit only at the partner bank',
    body: {
      amount: 50_000,
      payment_method: 'bank',
      customer: { name: 'Ada', email: 'payer@example.com' },
      transaction_reference: UNKNOWN_REF,
      bank: { bank_code: '044', account_or_phoneno: '0123456789' },
    },
    status: 400,
    message: 'Direct bank debit is only available for bank_code 058',
    kept: { body: { bank: { bank_code: '058', account_or_phoneno: '0123456789' } }, status: 200 },
  },
  'POST /transaction/payment/authorize': { none: 'the PIN or OTP is checked against the transaction' },
  'POST /transaction/validate-payment': { none: 'the token or OTP is checked against the transaction' },
  'GET /3ds/{ref}': { none: "takes only the transaction's reference" },
  'POST /3ds/{ref}/complete': { none: "takes only the transaction's reference" },
  'POST /3ds/{ref}/fail': { none: "takes only the transaction's reference" },
  'POST /transaction/charge_card': {
    rule: 'amount cannot be < 0 (spec A4)',
    body: { amount: -100, token_id: UNKNOWN_REF },
    status: 400,
    message: 'amount cannot be < 0',
    kept: { body: { amount: 100 }, status: 400, message: 'Invalid token_id' },
  },
  'PATCH /transaction/cancel/recurring': { none: 'whether a token can be cancelled needs the token' },
  'POST /virtual-account': {
    rule: "gender is '1' or '2'",
    body: {
      customer_identifier: UNKNOWN_REF,
      first_name: 'Ada',
      last_name: 'Walker',
      mobile_num: '08012345678',
      bvn: '22222222222',
      dob: '01/31/1990',
      gender: '3',
      address: '1 Sandbox Way',
    },
    status: 400,
    message: "gender must be '1' (male) or '2' (female)",
    kept: { body: { gender: '2' }, status: 200 },
  },
  'POST /virtual-account/business': {
    rule: 'mobile_num at most 11 digits',
    body: {
      bvn: '22222222222',
      business_name: 'Walker Ltd',
      customer_identifier: 'UNKNOWN0000000000000',
      mobile_num: '080123456789',
      beneficiary_account: UNKNOWN_ACCOUNT,
    },
    status: 400,
    message: 'mobile_num must be at most 11 digits',
    kept: {
      body: { mobile_num: '08012345678' },
      status: 424,
      message: `Validation Failure No record found for Account number-${UNKNOWN_ACCOUNT}`,
    },
  },
  'GET /virtual-account/customer/transactions/{id}': { none: "takes only the customer's identifier" },
  'GET /virtual-account/merchant/transactions': { none: `takes nothing, ${NO_LOOKUP}` },
  'GET /virtual-account/merchant/transactions/all': {
    rule: 'dir is ASC or DESC',
    query: { virtualAccount: UNKNOWN_ACCOUNT, dir: 'UP' },
    status: 400,
    message: '"dir" must be one of [ASC, DESC]',
    kept: { query: { dir: 'ASC' }, status: 200 },
  },
  'GET /virtual-account/customer/{number}': { none: "takes only the account number (10 digits: the field walk's)" },
  'GET /virtual-account/merchant/accounts': {
    rule: 'startDate in the format YY-MM-DD (no id: a listing)',
    query: { startDate: '2026/01/01' },
    status: 400,
    message: '"startDate" must be in the format YY-MM-DD',
  },
  'GET /virtual-account/webhook/logs': {
    rule: 'page is a whole number (no id: a listing)',
    query: { page: '-1' },
    status: 400,
    message: 'page must be a whole number',
  },
  'DELETE /virtual-account/webhook/logs/{ref}': { none: "takes only the notification's reference" },
  'GET /virtual-account/{id}': { none: "takes only the customer's identifier" },
  'POST /virtual-account/simulate/payment': {
    rule: "a simulated transfer (A2) pays a whole amount in kobo into a checkout's dynamic account",
    body: { virtual_account_number: '9900000000', amount: '12.50' },
    status: 400,
    message: 'amount must be a positive integer in the lowest currency unit',
    kept: { body: { amount: 5000 }, status: 404, message: 'Virtual account not found' },
  },
  'POST /transaction/mandate/create': {
    rule: 'end_date not before start_date',
    body: { ...MANDATE, end_date: '2026-11-30' },
    status: 400,
    message: 'end_date must not be before start_date',
    kept: { body: { end_date: '2027-12-01' }, status: 200 },
  },
  'POST /transaction/mandate/validate-otp': { none: 'the OTP is checked against the session' },
  'POST /transaction/mandate/resend-otp': { none: 'takes only the session token' },
  'POST /transaction/mandate/debit': {
    rule: 'minimum debit N200 (spec D3)',
    body: { amount: 19_999, mandate_id: UNKNOWN_REF, transaction_reference: UNKNOWN_REF },
    status: 400,
    message: 'Minimum amount for direct debit is N200.',
    kept: { body: { amount: 20_000 }, status: 404, message: `No mandate found for reference ${UNKNOWN_REF}` },
  },
  'POST /transaction/mandate/cancel': { none: 'takes only mandate ids, each answered after its lookup (200 always)' },
  'GET /transaction/mandate/get-mandates': {
    rule: 'status is initiated, approved, cancelled or rejected',
    query: { merchant_ref: UNKNOWN_REF, status: 'pending' },
    status: 400,
    message: 'status must be initiated, approved, cancelled or rejected',
    kept: { query: { status: 'approved' }, status: 404, message: `No mandate found for reference ${UNKNOWN_REF}` },
  },
  'POST /softpos/pos/remote-request': {
    rule: 'amount greater than 0 (spec E1)',
    body: { terminal_id: UNKNOWN_REF, amount: 0 },
    status: 400,
    message: 'amount must be a number greater than 0',
    kept: {
      body: { amount: 5000 },
      status: 400,
      message: 'terminal_id does not name an active terminal of the merchant',
    },
  },
  'GET /softpos/pos/remote-request/{ref}': { none: "takes only the request's reference" },
  'GET /transaction': {
    rule: "end_date not before start_date (the transaction list's window, A6)",
    query: { start_date: '2026-02-01', end_date: '2026-01-01', reference: UNKNOWN_REF },
    status: 400,
    message: 'Bad Request',
    kept: { query: { end_date: '2026-02-15' }, status: 200 },
  },
  'GET /transaction/verify/{ref}': { none: "takes only the transaction's reference" },
  'POST /softpos/terminal/configuration': { none: "takes only the serial number (its format is the field walk's)" },
  'POST /softpos/terminal/key-exchange': {
    rule: 'refresh is a boolean',
    query: { refresh: 'maybe' },
    body: { serial_no: 'SN-9999' },
    status: 400,
    message: 'refresh must be a boolean',
    kept: { query: { refresh: 'true' }, status: 404, message: 'Terminal not found' },
  },
  'POST /transaction': {
    rule: 'original_merchant_ref only for Refund and Completion',
    body: { ...POS_TXN, original_merchant_ref: UNKNOWN_REF },
    status: 400,
    message: 'original_merchant_ref is only for Refund and Completion',
    kept: { body: { original_merchant_ref: null }, status: 404, message: 'Terminal not found' },
  },
  'GET /transaction/by-ref/{merchant_ref}': {
    rule: 'merchant_ref at most 25 characters (spec Limits)',
    params: { merchant_ref: 'UNKNOWN000000000000000000' + '0' },
    status: 400,
    message: 'merchant_ref must be at most 25 characters',
    kept: { params: { merchant_ref: 'UNKNOWN000000000000000000' }, status: 404, message: 'Transaction not found' },
  },
  'POST /sms/send/instant': {
    rule: 'at most 100 messages a request (no id: nothing is looked up)',
    body: {
      sender_id: 'SANDBOX',
      messages: Array.from({ length: 101 }, () => ({ phone_number: '2348012345678', message: 'hi' })),
    },
    status: 400,
    message: 'messages must hold at most 100 items',
  },
  'POST /sms/campaign': {
    rule: 'is_scheduled is a boolean',
    body: {
      name: 'Walk',
      bucket_id: UNKNOWN_UUID,
      sender_id: 'SANDBOX',
      is_scheduled: 'yes',
      sscheduled_dor: '2026-12-01T09:00:00Z',
      template_id: UNKNOWN_UUID,
    },
    status: 400,
    message: 'is_scheduled must be a boolean',
    kept: { body: { is_scheduled: false }, status: 400, message: 'template_id does not name a template' },
  },
  'GET /sms/campaign': {
    rule: 'status is pending, failed or success (no id: a listing)',
    query: { status: 'done' },
    status: 400,
    message: 'status must be pending, failed or success',
  },
  'POST /sms/campaign/{id}': { none: "takes only the campaign's uuid" },
  'POST /sms/template': { none: `takes three required texts, ${NO_LOOKUP}` },
  'GET /sms/template': {
    rule: 'dir is ASC or DSC (no id: a listing)',
    query: { dir: 'UP' },
    status: 400,
    message: 'dir must be ASC or DSC',
  },
  'PATCH /sms/template/{id}': { none: 'its body fields are not shown in the spec: optional texts only' },
  'POST /sms/template/{id}': { none: "takes only the template's uuid" },
  'GET /vending/utilities/electricity/service-providers': { none: `takes nothing, ${NO_LOOKUP}` },
  'POST /vending/utilities/electricity/lookup': {
    rule: 'meter_type is prepaid or postpaid',
    body: { meter_no: UNKNOWN_ACCOUNT, meter_type: 'smart', provider: 'IE' },
    status: 400,
    message: 'meter_type must be prepaid or postpaid',
    kept: { body: { meter_type: 'prepaid' }, status: 400, message: 'Invalid meter number' },
  },
  'POST /vending/utilities/electricity': {
    rule: 'amount greater than 0',
    body: { reference: UNKNOWN_REF, amount: 0, phone_number: '2348012345678', email: 'payer@example.com' },
    status: 400,
    message: 'amount must be a whole number of naira greater than 0',
    kept: { body: { amount: 5000 }, status: 400, message: 'Invalid reference: look the meter up first' },
  },
  'GET /vending/transactions': {
    rule: 'date_from in the format YYYY-MM-DD',
    query: { reference: UNKNOWN_REF, date_from: 'yesterday' },
    status: 400,
    message: 'date_from must be YYYY-MM-DD',
    kept: { query: { date_from: '2026-01-01' }, status: 404, message: 'Transaction not found' },
  },
};

type Shape = Record<string, z.ZodType>;

/** The object shape behind a schema (through z.preprocess and refinements). */
function shapeOf(schema: z.ZodType | undefined): Shape {
  if (!schema) return {};
  if (schema instanceof z.ZodObject) return schema.shape as Shape;
  const out = (schema as unknown as { out?: z.ZodType }).out;
  return out ? shapeOf(out) : {};
}

const fails = (schema: z.ZodType | undefined, value: unknown) => !!schema && !schema.safeParse(value).success;

/** Every key filled with an unknown id it accepts; keys no id fits stay out. */
function withUnknownIds(shape: Shape): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(shape)) {
    const id = UNKNOWN_IDS.find((c) => field.safeParse(c).success);
    if (id !== undefined) out[key] = id;
  }
  return out;
}

/** Unknown ids everywhere they fit and one bad field (a field no id fits is bad by being absent). */
function badRequestFor(fields: RouteFields) {
  const params: Record<string, string> = {};
  for (const [key, field] of Object.entries(shapeOf(fields.params))) {
    const id = UNKNOWN_IDS.find((c) => field.safeParse(c).success);
    if (id === undefined) throw new Error(`no unknown id fits path parameter ${key}`);
    params[key] = id;
  }
  const body = withUnknownIds(shapeOf(fields.body));
  const query = withUnknownIds(shapeOf(fields.query)) as Record<string, string>;
  let bad = fails(fields.body, body) || fails(fields.query, query);
  // From the last field back: identifiers tend to come first, and stay unknown ids.
  for (const key of Object.keys(shapeOf(fields.body)).reverse()) {
    if (bad) break;
    body[key] = BAD_VALUE;
    bad = fails(fields.body, body);
    if (!bad) delete body[key];
  }
  for (const key of Object.keys(shapeOf(fields.query))) {
    for (const v of BAD_TEXT) {
      if (bad) break;
      query[key] = v;
      bad = fails(fields.query, query);
      if (!bad) delete query[key];
    }
  }
  // Nothing else to make bad: the id itself is the field (a malformed id is unknown too).
  for (const key of Object.keys(params)) {
    for (const v of BAD_TEXT) {
      if (bad) break;
      const was = params[key]!;
      params[key] = v;
      bad = fails(fields.params, params);
      if (!bad) params[key] = was;
    }
  }
  return { params, query, body, bad };
}

describe('every route checks its fields before it looks anything up', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0 });
  });
  afterAll(() => sb.close());

  it('the route table covers the spec groups A-H and their pages', () => {
    const paths = sb.routes().map((r) => r.path);
    expect(paths.length).toBeGreaterThan(45);
    for (const p of [
      '/transaction/initiate', // A
      '/transaction/initiate/process-payment', // B
      '/virtual-account/merchant/transactions/all', // C
      '/transaction/mandate/debit', // D
      '/softpos/pos/remote-request/{ref}', // E
      '/transaction/by-ref/{merchant_ref}', // F
      '/sms/template/{id}', // G
      '/vending/transactions', // H
      '/checkout/{ref}/card',
      '/3ds/{ref}',
    ])
      expect(paths).toContain(p);
  });

  it('walks every route with a bad field and an unknown id: the answer is the field error', async () => {
    const walked: string[] = [];
    const withoutFields: string[] = [];
    const wrong: string[] = [];
    for (const route of sb.routes()) {
      const name = `${route.method} ${route.path}`;
      const { params, query, body, bad } = badRequestFor(route.fields);
      if (!bad) {
        // Nothing a caller sends can be wrong: then it names nothing to look up either.
        expect({ name, fields: Object.keys(route.fields) }).toEqual({ name, fields: [] });
        withoutFields.push(name);
        continue;
      }
      const path = route.path.replace(/\{(\w+)\}/g, (_m, k: string) => encodeURIComponent(params[k]!));
      const qs = new URLSearchParams(query).toString();
      const res = await call(
        sb.url,
        route.method,
        qs ? `${path}?${qs}` : path,
        route.method === 'GET' ? undefined : body,
      );
      const expected = firstFieldError(route.fields, { params, query, body })!;
      const message = route.fields.message?.(expected.field, expected.rule) ?? `${expected.field} ${expected.rule}`;
      const field = expected.field.split('.').pop()!;
      const named = route.fields.message !== undefined || message.includes(field);
      if (res.status !== 400 || res.body?.message !== message || !named)
        wrong.push(
          `${name}: sent ${JSON.stringify({ params, query, body })}, got ${res.status} ${res.text.slice(0, 160)}`,
        );
      walked.push(name);
    }
    expect(wrong).toEqual([]);
    // Only routes that take nothing at all are not walked (the merchant's transactions, C4; the providers, H1).
    expect(withoutFields.sort()).toEqual([
      'GET /vending/utilities/electricity/service-providers',
      'GET /virtual-account/merchant/transactions',
    ]);
    expect(walked.length).toBe(sb.routes().length - withoutFields.length);
  });

  it('an unknown id with well-formed fields still gets its lookup answer (the walk is not passing on 400s alone)', async () => {
    expect((await call(sb.url, 'GET', '/softpos/pos/remote-request/UNKNOWN0000000000000')).status).toBe(404);
    expect((await call(sb.url, 'GET', '/virtual-account/customer/0000000000')).status).toBe(404);
    const debit = await call(sb.url, 'POST', '/transaction/mandate/debit', {
      amount: 50_000,
      mandate_id: 'UNKNOWN0000000000000',
      transaction_reference: 'UNKNOWN0000000000000',
    });
    expect(debit.body?.message).toBe('No mandate found for reference UNKNOWN0000000000000');
    // ...and the same call with a bad amount is the field error, not the unknown mandate.
    const badAmount = await call(sb.url, 'POST', '/transaction/mandate/debit', {
      amount: '500',
      mandate_id: 'UNKNOWN0000000000000',
      transaction_reference: 'UNKNOWN0000000000000',
    });
    expect(badAmount).toMatchObject({ status: 400, body: { message: 'amount must be a positive integer in kobo' } });
  });

  it("the checkout modal's form post with a bad field gets the modal back with the error; a JSON call gets the envelope", async () => {
    const created = await call(sb.url, 'POST', '/transaction/initiate', {
      amount: 50_000,
      email: 'payer@example.com',
      currency: 'NGN',
      initiate_type: 'inline',
    });
    const ref = created.body!.data.transaction_ref as string;
    const page = await call(sb.url, 'POST', `/checkout/${ref}/bank`, { account_or_phoneno: 'abc' }, { form: true });
    expect(page.status).toBe(400);
    expect(page.text).toContain('id="amount"'); // the modal itself, not a bare error page
    expect(page.text).toContain('account_or_phoneno must be a 10-digit account number or a phone number');
    const json = await call(sb.url, 'POST', `/checkout/${ref}/bank`, { account_or_phoneno: 'abc' });
    expect(json).toMatchObject({
      status: 400,
      body: { success: false, message: 'account_or_phoneno must be a 10-digit account number or a phone number' },
    });
  });

  it('walks every route with a rule-breaking value and an unknown id: the answer is the rule error, not the not-found', async () => {
    const send = (method: string, path: string, req: Sent) => {
      const filled = path.replace(/\{(\w+)\}/g, (_m, k: string) => encodeURIComponent(req.params?.[k] ?? UNKNOWN_REF));
      const qs = new URLSearchParams(req.query ?? {}).toString();
      return call(sb.url, method, qs ? `${filled}?${qs}` : filled, method === 'GET' ? undefined : (req.body ?? {}));
    };
    const names = sb.routes().map((r) => `${r.method} ${r.path}`);
    expect(Object.keys(RULES).filter((n) => !names.includes(n))).toEqual([]); // no row for a route that is gone
    const wrong: string[] = [];
    const withoutRule: string[] = [];
    for (const name of names) {
      const row = RULES[name];
      if (!row) {
        wrong.push(`${name}: no row in RULES (add the rule it checks before its lookups, or why it has none)`);
        continue;
      }
      if ('none' in row) {
        withoutRule.push(name);
        continue;
      }
      const [method, path] = name.split(' ') as [string, string];
      sb.reset(); // each row on a fresh sandbox: the unknown ids stay unknown
      const res = await send(method, path, row);
      if (res.status !== row.status || res.body?.message !== row.message)
        wrong.push(
          `${name} (${row.rule}): expected ${row.status} ${row.message}, got ${res.status} ${res.text.slice(0, 160)}`,
        );
      if (!row.kept) continue;
      const kept = {
        params: { ...row.params, ...row.kept.params },
        query: { ...row.query, ...row.kept.query },
        body: { ...row.body, ...row.kept.body },
      };
      sb.reset();
      const lookedUp = await send(method, path, kept);
      if (
        lookedUp.status !== row.kept.status ||
        (row.kept.message !== undefined && lookedUp.body?.message !== row.kept.message)
      )
        wrong.push(
          `${name} with the rule kept: expected ${row.kept.status} ${row.kept.message ?? ''}, got ${lookedUp.status} ${lookedUp.text.slice(0, 160)}`,
        );
    }
    sb.reset();
    expect(wrong).toEqual([]);
    // Said in the table, never skipped silently: these routes check no lookup-free rule beyond their fields.
    expect(withoutRule.length).toBe(Object.values(RULES).filter((r) => 'none' in r).length);
  });

  it('a route cannot be registered without declaring each path parameter', () => {
    const router = new Router();
    expect(() => router.add('GET', '/things/{id}', 'direct', {}, () => ({ status: 200 }))).toThrow(
      /must declare exactly the path parameters \(id\)/,
    );
    expect(() =>
      router.add('GET', '/things/{id}', 'direct', { params: z.object({ other: z.string() }) }, () => ({ status: 200 })),
    ).toThrow(/path parameters/);
    router.add('GET', '/things/{id}', 'direct', { params: z.object({ id: z.string() }) }, () => ({ status: 200 }));
    expect(router.list()).toHaveLength(1);
  });
});
