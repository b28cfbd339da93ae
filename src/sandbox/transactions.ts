// Query all transactions (A6; date window of at most one month) and verify one transaction by
// reference (Success | Failed | Abandoned | Pending; 400 for an unknown reference).
import { z } from 'zod';
import type { SandboxClock } from './clock';
import {
  addRoutes,
  fail,
  MERCHANT_EMAIL,
  MERCHANT_ID,
  MERCHANT_NAME,
  ok,
  page,
  type Reply,
  type RequestContext,
  type Router,
} from './http';
import { chargeResult, type Payment, type PaymentStore } from './payments';
import type { PosRemoteTransaction } from './pos-remote';
import { identifier, oneOf, pathParams, rule, type RouteFields } from './validation';

const date = rule((v) => typeof v === 'string' && parseDate(v) !== undefined, 'must be YYYY-MM-DD or an ISO timestamp');
/** Query all transactions: every field error is the spec's 'Bad Request' (the window itself is checked by the handler). */
const LIST_TRANSACTIONS_FIELDS: RouteFields = {
  query: z.object({
    start_date: date,
    end_date: date,
    currency: oneOf(['NGN', 'USD'], 'must be NGN or USD').optional(),
    reference: identifier().optional(),
  }),
  message: () => 'Bad Request',
  // The window (end not before start, at most one month) needs no lookup: 'Bad Request' before any search.
  rules: ({ query }) => {
    const start = parseDate(query.start_date ?? null)!;
    const end = parseDate(query.end_date ?? null)!;
    return end < start || end > addOneMonth(start) ? { message: 'Bad Request' } : undefined;
  },
};

const META_KEYS = [
  'ip_address',
  'Customer_name',
  'user_agent',
  'referring_site',
  'payment_link_id',
  'payment_link_type',
  'source',
  'device_id',
  'order_id',
  'auth_code',
  'fingerprintData',
  'callback_url',
  'initiate_type',
  'browser_screen_height',
  'browser_screen_width',
  'referrer_url',
  'extra',
];

/** YYYY-MM-DD or an ISO timestamp → epoch ms (UTC), or undefined. */
export function parseDate(v: string | null): number | undefined {
  if (!v) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(v)) return undefined;
  const t = Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v);
  return Number.isNaN(t) ? undefined : t;
}

/** The same day one calendar month later (clamped to the month's end). */
export function addOneMonth(t: number): number {
  const d = new Date(t);
  const target = new Date(
    Date.UTC(
      d.getUTCFullYear(),
      d.getUTCMonth() + 1,
      1,
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
      d.getUTCMilliseconds(),
    ),
  );
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return target.getTime();
}

/** What a transaction in the list shows, whatever made it. */
interface Listed {
  id: number;
  amount: unknown;
  ref: string;
  email: string | null;
  merchantAmount: unknown;
  customerName: string | null;
  status: string;
  charges: number;
  currency: string;
  gatewayRef: string | null;
  type: string;
  createdAt: number;
}

/** A transaction record, in the spec's field order, with its meta (every META_KEYS key, null unless given). */
function listedRecord(clock: SandboxClock, t: Listed, meta: Record<string, unknown>): Record<string, unknown> {
  const metaValues = { ...Object.fromEntries(META_KEYS.map((k) => [k, null])), ...meta };
  return {
    id: t.id,
    transaction_amount: t.amount,
    transaction_ref: t.ref,
    email: t.email,
    merchant_id: MERCHANT_ID,
    merchant_amount: t.merchantAmount,
    merchant_name: MERCHANT_NAME,
    merchant_business_name: MERCHANT_NAME,
    merchant_email: MERCHANT_EMAIL,
    customer_email: t.email,
    customer_name: t.customerName,
    meta_data: JSON.stringify(metaValues),
    meta: Object.fromEntries(Object.entries(metaValues).map(([k, v]) => [k, v === null ? [] : [v]])),
    transaction_status: t.status,
    transaction_charges: t.charges,
    transaction_currency_id: t.currency,
    transaction_gateway_id: t.gatewayRef,
    transaction_type: t.type,
    flat_charge: 0,
    is_suspicious: false,
    is_refund: false,
    created_at: clock.iso(t.createdAt),
  };
}

/** A POS remote request as the merchant's transaction list shows it (docs/choices.md). */
const posRecord = (clock: SandboxClock, t: PosRemoteTransaction) =>
  listedRecord(
    clock,
    { ...t, email: null, merchantAmount: t.amount, customerName: null, charges: 0, gatewayRef: null, type: 'Card' },
    { source: 'pos_remote', device_id: t.terminalId, initiate_type: 'api', extra: { account_type: t.accountType } },
  );

const paymentRecord = (clock: SandboxClock, p: Payment) =>
  listedRecord(
    clock,
    { ...p, status: p.status.toLowerCase(), charges: p.fee },
    {
      Customer_name: p.customerName,
      callback_url: p.checkout?.callbackUrl ?? null,
      initiate_type: p.checkout ? 'inline' : 'api',
      source: p.origin,
      auth_code: p.tokenId ?? null,
      extra: Object.keys(p.meta).length ? p.meta : null,
    },
  );

interface TransactionsDeps {
  store: PaymentStore;
  posRemote: () => PosRemoteTransaction[];
}

/** All transactions (A6): payments and POS remote requests in a date window, newest first. */
async function listTransactions({ store, posRemote }: TransactionsDeps, { query }: RequestContext): Promise<Reply> {
  const clock = store.clock;
  await clock.runDue(); // due POS remote completions and expiries show in the list
  const start = parseDate(query.get('start_date'))!;
  const endDay = parseDate(query.get('end_date'))!;
  const currency = query.get('currency');
  const reference = query.get('reference');
  // A date-only end_date covers that whole day.
  const end = (query.get('end_date') ?? '').length === 10 ? endDay + 24 * 3600 * 1000 - 1 : endDay;
  const wanted = (t: { ref: string; currency: string; createdAt: number }) =>
    (!reference || t.ref === reference) &&
    (!currency || t.currency === currency) &&
    t.createdAt >= start &&
    t.createdAt <= end;
  const rows = [
    ...store
      .all()
      .filter(wanted)
      .map((p) => ({ createdAt: p.createdAt, id: p.id, row: () => paymentRecord(clock, p) })),
    ...posRemote()
      .filter(wanted)
      .map((t) => ({ createdAt: t.createdAt, id: t.id, row: () => posRecord(clock, t) })),
  ]
    .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id)
    .map((x) => x.row());
  return ok(page(rows, query, 50, 'perpage'));
}

/** Verify one transaction (docs/choices.md). */
function verify({ store }: TransactionsDeps, { params }: RequestContext): Reply {
  const p = store.get(params.ref);
  if (!p) return fail(400, `Transaction ${params.ref} not found`);
  return ok({
    ...chargeResult(p, store.clock),
    merchant_amount: p.merchantAmount,
    meta: p.meta,
    ...(p.failureReason ? { failure_reason: p.failureReason } : {}),
  });
}

export function registerTransactions(
  router: Router,
  store: PaymentStore,
  posRemote: () => PosRemoteTransaction[] = () => [],
): void {
  addRoutes(router, 'direct', { store, posRemote }, [
    ['GET', '/transaction', LIST_TRANSACTIONS_FIELDS, listTransactions],
    ['GET', '/transaction/verify/{ref}', { params: pathParams('ref') }, verify],
  ]);
}
