// Fields before lookups, for every route of the sandbox (issue #26 §4). The walk reads the
// sandbox's own route table, so a route added later is walked too: for each route it fills every
// identifier it can with an id the sandbox has never issued, leaves (or makes) one field bad, and
// sends that over HTTP. The answer must be the field error (400, naming the field), never what a
// lookup of the unknown id would answer (404, 'not found', 424 'Invalid or expired session', ...).
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
    // Only routes that take nothing at all are not walked (C4's listing, H1's providers).
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
