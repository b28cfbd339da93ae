// The request fields of every sandbox route, checked in one step before its handler runs (issue
// #26 §4): each route declares zod schemas for its path parameters, query and body where it is
// registered (Router.add requires them), and the router answers a field error before the handler
// can look anything up. Messages follow the spec's pattern: `<field> is required`, `<field> is not
// allowed to be empty`, otherwise `<field> <rule>`.
import { z } from 'zod';
import type { Reply, RequestContext } from './request-context';

/** What a route accepts. Absent: that part carries no field (a route with none declares `{}`). */
export interface RouteFields {
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** The message for a field error when the route's own wording differs from `<field> <rule>`. */
  message?: (field: string, rule: string) => string;
  /** A page route's answer to a form post with a bad field (the checkout modal shows it in place). */
  formError?: (message: string, ctx: RequestContext) => Reply;
  /**
   * The route's business rules that need no lookup (minimums, maximums, allowed combinations, date
   * order), checked after the fields and before the handler can look anything up (issue #44 §4):
   * a rule-breaking request about an unknown id gets the rule's error, never the not-found.
   */
  rules?: (input: RequestInput) => RuleBreak | undefined;
}

/** A broken business rule: the message as the spec words it, and its status (400 unless said). */
export interface RuleBreak {
  message: string;
  status?: number;
}

export interface FieldError {
  /** Dotted path of the field, e.g. `card.number`. */
  field: string;
  /** `is required`, `is not allowed to be empty`, or the schema's own rule. */
  rule: string;
}

export interface RequestInput {
  params: Record<string, string>;
  query: Record<string, string>;
  body: Record<string, unknown>;
}

/** The first field error of a request, path parameters first, then query, then body; undefined when it is valid. */
export function firstFieldError(fields: RouteFields, input: RequestInput): FieldError | undefined {
  for (const part of ['params', 'query', 'body'] as const) {
    const schema = fields[part];
    if (!schema) continue;
    const result = schema.safeParse(input[part]);
    if (!result.success) return describe(result.error.issues[0]!, input[part], part);
  }
  return undefined;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

function describe(issue: z.core.$ZodIssue, root: unknown, part: string): FieldError {
  const field = issue.path.map(String).join('.') || part;
  if (issue.code === 'custom' && issue.params?.asIs === true) return { field, rule: issue.message };
  const value = valueAt(root, issue.path);
  if (value === undefined || value === null) return { field, rule: 'is required' };
  if (value === '' || (Array.isArray(value) && value.length === 0))
    return { field, rule: 'is not allowed to be empty' };
  // zod's own wording ("Invalid input: ...", "Too small: ...") is replaced by the spec's style.
  if (!/^(Invalid|Too (small|big))\b/.test(issue.message)) return { field, rule: issue.message };
  if (issue.code === 'invalid_type')
    return { field, rule: `must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}` };
  if (issue.code === 'invalid_value') return { field, rule: `must be one of ${issue.values.map(String).join(', ')}` };
  return { field, rule: 'is invalid' };
}

/** A refinement's issue whose rule is taken as written, even for a missing field (e.g. `pin` + `or otp is required`). */
export const asIs = (path: string[], message: string) => ({ path, message, params: { asIs: true } });

/** The first value of each query parameter (as `URLSearchParams.get` reads it). */
export function queryObject(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of query) if (!(k in out)) out[k] = v;
  return out;
}

// ---- Field builders ------------------------------------------------------------------------
// Handlers read the raw request (numbers may come as digit strings, as callers send them); these
// check what a field must look like, with the rule as the handler used to word it.

/** Any value passing `check`; missing fails as `is required` (wrap in `.optional()` when it is not). */
export const rule = (check: (v: unknown) => boolean, message: string) => z.unknown().refine(check, message);

/** A required, non-empty string. */
export const text = (message = 'must be a string') => rule((v) => typeof v === 'string' && v !== '', message);

/** A string (or number) whose text matches `re`. */
export const matching = (re: RegExp, message: string) =>
  rule((v) => (typeof v === 'string' || typeof v === 'number') && re.test(String(v)), message);

/** A positive safe integer given as a number or a string of digits (the spec types some amounts as strings). */
export function positiveIntegerValue(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** A positive safe integer, given as a number or a string of digits. */
export const positiveInteger = (message: string) => rule((v) => positiveIntegerValue(v) !== undefined, message);

/** A positive safe integer given as a JSON number only. */
export const positiveNumber = (message: string) =>
  rule((v) => typeof v === 'number' && Number.isSafeInteger(v) && v > 0, message);

export const oneOf = (values: readonly string[], message: string, caseInsensitive = false) =>
  rule(
    (v) =>
      typeof v === 'string' && values.some((x) => (caseInsensitive ? x.toLowerCase() === v.toLowerCase() : x === v)),
    message,
  );

export const object = (message: string) =>
  rule((v) => v !== null && typeof v === 'object' && !Array.isArray(v), message);

/** A code the payer types (PIN, OTP, token, bank code): a non-empty string or a number; its value is the handler's business. */
export const CODE = rule(
  (v) => (typeof v === 'string' && v !== '') || typeof v === 'number',
  'must be a string of digits',
);

/** The longest address a mail system carries (RFC 5321's path limit less its brackets). */
export const EMAIL_MAX_LENGTH = 254;

/**
 * local@label.rest, at most 254 characters. Linear time on any input (issue #42 §5): the length is
 * checked first by a lookahead that reads at most 255 characters, no quantifier is nested, and no
 * two neighbouring parts can match the same character (the local part has no `@`, the first label
 * no dot), so nothing backtracks more than once. The former `[^@\s]+@[^@\s]+\.[^@\s]+` took
 * about 0.8 s to refuse `x@` and 20,000 dots, growing with the square of the length.
 */
export const EMAIL = /^(?=[^]{3,254}$)[^@\s]+@[^@\s.]+\.[^@\s]+$/;
// The client's uuid rule (any version; the sandbox issues v4).
export { UUID_PATTERN as UUID } from '../api/schemas/common';

/**
 * An identifier in a path or a lookup field: 1 to 100 characters of letters, digits and `_.:-`
 * (what the sandbox ever issues, and what the references the spec shows look like).
 */
export const IDENTIFIER = /^[A-Za-z0-9_.:-]{1,100}$/;
export const identifier = (message = 'must be 1 to 100 letters, digits or _.:-') => matching(IDENTIFIER, message);

/** One identifier, or a non-empty list of them (the mandate cancel's mandateIds, the token cancel's auth_code). */
export const identifiers = (message: string) =>
  rule(
    (v) => (Array.isArray(v) ? v.length > 0 && v.every((x) => IDENTIFIER.test(String(x))) : IDENTIFIER.test(String(v))),
    message,
  );

/** A list's paging in the query: `page` and `perPage`, whole numbers. */
export const PAGING = {
  page: matching(/^\d{1,6}$/, 'must be a whole number').optional(),
  perPage: matching(/^\d{1,6}$/, 'must be a whole number').optional(),
};

/** A list's day filter in the query: `date_from` and `date_to`, each a day (YYYY-MM-DD, a timestamp's day too). */
const day = rule((v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v), 'must be YYYY-MM-DD').optional();
export const DAYS = { date_from: day, date_to: day };

/** Path parameters, each an identifier unless given its own rule. */
export function pathParams(...names: string[]): z.ZodObject;
export function pathParams(shape: Record<string, z.ZodType>): z.ZodObject;
export function pathParams(...args: unknown[]): z.ZodObject {
  if (typeof args[0] === 'object') return z.object(args[0] as Record<string, z.ZodType>);
  return z.object(Object.fromEntries((args as string[]).map((n) => [n, identifier()])));
}
