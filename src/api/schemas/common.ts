// Building blocks shared by the request and response schemas.
//
// Rules for money: fields the spec types as integers (card, mandate and POS amounts, in the
// lowest unit) are safe integers and a fraction is refused, never rounded. Fields the spec types
// as decimal strings (virtual accounts, vending) must match DECIMAL_STRING. Fields the spec types
// as plain "number" (charges, merchant_amount, costs) accept any finite number.
import { z } from 'zod';

export const DECIMAL_STRING = /^\d+(\.\d+)?$/;
export const SIGNED_DECIMAL_STRING = /^-?\d+(\.\d+)?$/;

const AMOUNT_UNIT = 'an integer in the lowest currency unit (kobo for NGN, cent for USD)';

function describeNumberProblem(v: number): string | undefined {
  if (!Number.isFinite(v)) return `must be ${AMOUNT_UNIT}; got a non-finite number`;
  if (!Number.isInteger(v))
    return `must be ${AMOUNT_UNIT}; a fractional amount is refused, never rounded (convert to kobo/cent first)`;
  if (!Number.isSafeInteger(v)) return 'is beyond the safe integer range';
  return undefined;
}

/** A required field's error: 'is required' when it is absent, `message` when it has the wrong type. */
export const requiredOr =
  (message: string) =>
  (iss: { input?: unknown }): string =>
    iss.input === undefined ? 'is required' : message;

/** A required string of a fixed form: `must be ${what}` when it is no string, `rule` when it breaks the pattern. */
export const patternString = (what: string, pattern: RegExp, rule: string) =>
  z.string({ error: requiredOr(`must be ${what}`) }).regex(pattern, rule);

/**
 * A value callers may hold as a number (ids, OTPs, meter numbers, account numbers): a string or
 * a number, sent as a string so a leading 0 survives, then checked by `then`.
 */
export const textOrNumber = (what: string, then: z.ZodString) =>
  z
    .union([z.string(), z.number()], { error: requiredOr(`must be ${what}`) })
    .transform((v) => String(v))
    .pipe(then);

/** A required nested object: `must be ${what}` when something else came. */
export const requiredObject = <S extends z.core.$ZodLooseShape>(shape: S, what: string) =>
  z.strictObject(shape, { error: requiredOr(`must be ${what}`) });

const requiredNumber = (what: string) => z.number({ error: requiredOr(`must be a number: ${what}`) });

/** Adds an issue saying what is wrong and ends the transform. */
function refuse(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
}

/**
 * The integer a safe integer or a string matching `digits` stands for; undefined after an issue
 * saying why not (`notDigits` for a string of another form).
 */
function integerAmount(v: number | string, ctx: z.RefinementCtx, digits: RegExp, notDigits: string) {
  let problem: string | undefined;
  if (typeof v === 'number') problem = describeNumberProblem(v);
  else if (!digits.test(v)) problem = notDigits;
  else if (!Number.isSafeInteger(Number(v))) problem = 'is beyond the safe integer range';
  if (problem === undefined) return Number(v);
  ctx.addIssue({ code: 'custom', message: problem });
  return undefined;
}

/** Request amount sent as a JSON integer. */
export function koboAmount(opts: { min?: number; minMessage?: string } = {}) {
  const min = opts.min ?? 1;
  return requiredNumber(AMOUNT_UNIT).superRefine((v, ctx) => {
    const problem = describeNumberProblem(v) ?? (v < min ? (opts.minMessage ?? `must be at least ${min}`) : undefined);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/**
 * Request amount the spec types as a string in the lowest unit (A1, F3): accepts a safe integer
 * or a string of digits, sends a string of digits.
 */
export function koboAmountAsString(opts: { min?: number } = {}) {
  const min = opts.min ?? 1;
  return z.union([z.number(), z.string()], { error: requiredOr(`must be ${AMOUNT_UNIT}`) }).transform((v, ctx) => {
    const digitsOnly = `must be ${AMOUNT_UNIT}, written with digits only (no decimal point, no separators)`;
    const n = integerAmount(v, ctx, /^\d+$/, digitsOnly);
    if (n === undefined) return z.NEVER;
    return n < min ? refuse(ctx, `must be at least ${min}`) : String(n);
  });
}

/**
 * Response integer amount (lowest unit). Accepts a safe integer or a string of digits (some
 * bodies quote numbers) and yields a number. Fractions are refused.
 */
export const kobo = z
  .union([z.number(), z.string()])
  .transform(
    (v, ctx) =>
      integerAmount(typeof v === 'string' ? v.trim() : v, ctx, /^-?\d+$/, `must be ${AMOUNT_UNIT}`) ?? z.NEVER,
  );

/** Response decimal string (virtual accounts, vending). */
export const decimalString = z.string().regex(DECIMAL_STRING, 'must be a decimal string such as "5000.00"');
export const signedDecimalString = z
  .string()
  .regex(SIGNED_DECIMAL_STRING, 'must be a decimal string such as "-1200.50"');
/** Request decimal string: accepts a decimal string, or a safe integer turned into one. */
export const decimalAmountInput = z
  .union([z.string(), z.number()], { error: requiredOr('must be a decimal string such as "5000.00"') })
  .transform((v, ctx) => {
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v) || v < 0)
        return refuse(
          ctx,
          'must be a decimal string such as "5000.00" (a fractional JS number is refused: write it as a string)',
        );
      return String(v);
    }
    return DECIMAL_STRING.test(v) ? v : refuse(ctx, 'must be a decimal string such as "5000.00"');
  });

/** Any finite number (fields the spec types as "number", not as integer). */
export const finiteNumber = z.number().refine(Number.isFinite, 'must be a finite number');

/** A finite number that may arrive quoted. */
export const looseNumber = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const n = typeof v === 'number' ? v : Number(v.trim());
  if (!Number.isFinite(n) || (typeof v === 'string' && v.trim() === '')) return refuse(ctx, 'must be a number');
  return n;
});

/** Optional, nullable in responses. */
export const opt = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

/** Strings that some bodies send as numbers (ids, codes). */
export const idString = z.union([z.string(), z.number()]).transform((v) => String(v));

export const requiredString = (what = 'a string') =>
  z.string({ error: requiredOr(`must be ${what}`) }).min(1, 'must not be empty');

export const email = z
  .string({ error: requiredOr('must be an email address') })
  .max(254, 'must be at most 254 characters')
  // Linear: the first label has no dot, so it and the dot after it cannot trade characters (the
  // former [^\s@]+\.[^\s@]+ backtracked quadratically on `x@` and many dots).
  .regex(/^[^\s@]+@[^\s@.]+\.[^\s@]+$/, 'must be an email address');

export const currency = z.enum(['NGN', 'USD'], { error: 'must be NGN or USD' });

/**
 * Merchant reference used for idempotency: letters, digits, '_', '-', '.' (the spec says
 * "unique alphanumeric"; we also allow the usual separators).
 */
export const reference = () =>
  requiredString('a string')
    .max(100, 'must be at most 100 characters')
    .regex(/^[A-Za-z0-9_.-]+$/, 'must contain only letters, digits, "_", "-" or "."');

export const pathParam = requiredString('a string').max(200, 'must be at most 200 characters');

/** A uuid of any version: the spec calls the SMS ids 'uuid' (G2, G4, G7, G8) and names no version. */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const uuidString = patternString('a uuid', UUID_PATTERN, 'must be a uuid');

export const tenDigitAccount = patternString('a string of exactly 10 digits', /^\d{10}$/, 'must be exactly 10 digits');

export const tenDigitAccountInput = textOrNumber(
  'exactly 10 digits',
  z.string().regex(/^\d{10}$/, 'must be exactly 10 digits'),
);

export const mobileNum = patternString(
  'a string of at most 11 digits',
  /^\d{1,11}$/,
  'must be at most 11 digits (digits only)',
);

export const phoneNumber = patternString(
  'a phone number string',
  /^\+?\d{7,15}$/,
  'must be a phone number (digits, optional leading +)',
);

export const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

export const twoDigitMonth = patternString(
  'a 2-digit month string "01".."12"',
  /^(0[1-9]|1[0-2])$/,
  'must be a 2-digit month "01".."12"',
);
export const twoDigitYear = patternString(
  'a 2-digit year string such as "27"',
  /^\d{2}$/,
  'must be a 2-digit year such as "27"',
);

function validCalendarDate(y: number, m: number, d: number): boolean {
  const dt = new Date(Date.UTC(y, m - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === m - 1 && dt.getUTCDate() === d;
}

/** YYYY-MM-DD, a real calendar date. */
export const isoDate = z.string().superRefine((v, ctx) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m || !validCalendarDate(+m[1], +m[2], +m[3]))
    ctx.addIssue({ code: 'custom', message: 'must be a date YYYY-MM-DD' });
});

/** MM-DD-YYYY (C5). */
export const mmddyyyyDash = z.string().superRefine((v, ctx) => {
  const m = /^(\d{2})-(\d{2})-(\d{4})$/.exec(v);
  if (!m || !validCalendarDate(+m[3], +m[1], +m[2]))
    ctx.addIssue({ code: 'custom', message: 'must be a date MM-DD-YYYY' });
});

/** mm/dd/yyyy (a customer account's dob, C1). */
export const mmddyyyySlash = z.string({ error: requiredOr('must be a date mm/dd/yyyy') }).superRefine((v, ctx) => {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(v);
  if (!m || !validCalendarDate(+m[3], +m[1], +m[2]))
    ctx.addIssue({ code: 'custom', message: 'must be a date mm/dd/yyyy' });
});

/** Parses YYYY-MM-DD or an ISO 8601 timestamp to epoch ms (UTC); undefined when unparseable. */
export function parseDateLike(v: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (m) return validCalendarDate(+m[1], +m[2], +m[3]) ? Date.UTC(+m[1], +m[2] - 1, +m[3]) : undefined;
  if (!/^\d{4}-\d{2}-\d{2}T/.test(v)) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** The same date one calendar month later (clamped to the month's last day). */
export function addOneMonth(ms: number): number {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth() + 1;
  const lastDay = new Date(Date.UTC(y, mo + 1, 0)).getUTCDate();
  return Date.UTC(
    y,
    mo,
    Math.min(d.getUTCDate(), lastDay),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
}

/** Case-insensitive enum that yields the canonical spelling. */
export function caseInsensitiveEnum<const T extends readonly [string, ...string[]]>(values: T, message: string) {
  return z.string({ error: requiredOr(message) }).transform((v, ctx) => {
    const hit = values.find((c) => c.toLowerCase() === v.trim().toLowerCase());
    return hit === undefined ? refuse(ctx, message) : (hit as T[number]);
  });
}

/** An empty request (operations without inputs). */
export const EmptyRequestSchema = z.strictObject({});
export type EmptyRequest = z.input<typeof EmptyRequestSchema>;

/** Positive integer query parameter (page, perPage...). Accepts numeric strings. */
export const pageNumber = z
  .union([z.number(), z.string()])
  .transform((v) => (typeof v === 'number' ? v : Number(v)))
  .pipe(z.number().int('must be a whole number').min(1, 'must be at least 1'));

/** The page and page size the lists take. */
export const paging = { page: pageNumber.optional(), perPage: pageNumber.optional() };
/** The SMS and vending lists: paging, a sort key and a day window. */
export const sortedPaging = { ...paging, sorted_by: z.string().min(1).optional() };
export const dayWindow = { date_from: isoDate.optional(), date_to: isoDate.optional() };

/** A page the service counts: `count` rows in all, `rows` of this page. */
export const countedRows = <T extends z.ZodType, E extends z.core.$ZodLooseShape = Record<never, never>>(
  row: T,
  more?: E,
) => z.looseObject({ count: z.number().int(), rows: z.array(row), ...(more as E) });

/** `data` that the spec gives as {} or leaves open. */
export const anyData = z.unknown().transform((v) => (v === undefined ? null : v));

/**
 * Normalises an alias key onto the canonical one when the canonical one is absent. The alias is
 * removed (`aamount` → `amount`) unless `keepAlias` (mandate `is_approved` stays next to `approved`).
 */
export function withAlias(canonical: string, alias: string, keepAlias = false) {
  return (v: unknown): unknown => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      if (o[canonical] === undefined && o[alias] !== undefined) {
        if (keepAlias) return { ...o, [canonical]: o[alias] };
        const { [alias]: value, ...rest } = o;
        return { ...rest, [canonical]: value };
      }
    }
    return v;
  };
}
