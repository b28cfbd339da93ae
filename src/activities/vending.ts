// Electricity vending activities: the provider list, the meter lookup, the purchase and the
// lookup by reference.
//
// The providers are cached in memory per worker (TTL, default 1 hour): the list changes
// rarely and every sale needs it. The purchase moves money: sent once (sendOnce, ./calls.ts); the
// workflow checks by reference before any new attempt. A 200 is not a success: the workflow reads
// the record's status.
import { Context } from '@temporalio/activity';
import { type ElectricityProvider, type PaymentsClient, type VendingTransaction } from '../api';
import { flowDeps, type ActivityDeps, type FlowDeps } from './deps';
import { bindActivities } from './bind';
import { attemptRequestId, read, sendOnce } from './calls';
import {
  VEND_PROVIDER_LIST_STEP,
  type ListedMeterLookup,
  type MeterInfo,
  type VendCheckOutcome,
  type VendRecord,
} from '../shared/vending';

export interface VendingActivityOptions {
  /** How long the provider list is kept. Default 1 hour. */
  providerCacheTtlMs?: number;
  /** Clock for the cache (tests). */
  now?: () => number;
}

export function toVendRecord(t: VendingTransaction): VendRecord {
  const token = t.value_reference ?? t.meta_json?.token ?? undefined;
  const units = t.meta_json?.total_units;
  return {
    reference: t.reference,
    status: String(t.status).toLowerCase(),
    amount: t.amount,
    ...(token ? { token } : {}),
    ...(units != null ? { units: String(units) } : {}),
    ...(t.meta_json?.receipt_number ? { receipt_number: t.meta_json.receipt_number } : {}),
    ...(t.meta_json?.meter_number ? { meter_number: t.meta_json.meter_number } : {}),
    ...(t.transaction_id != null ? { transaction_id: String(t.transaction_id) } : {}),
    ...(t.createdAt ? { createdAt: t.createdAt } : {}),
  };
}

type MeterRequest = { meter_no: string; meter_type: 'prepaid' | 'postpaid'; provider: string };

/** The provider list, kept per worker for a while: it changes rarely and every sale needs it. */
class ProviderCache {
  private cache: { at: number; providers: ElectricityProvider[] } | undefined;
  private inflight: Promise<ElectricityProvider[]> | undefined;

  constructor(
    private readonly api: PaymentsClient,
    private readonly ttl: number,
    private readonly now: () => number,
  ) {}

  providers(): Promise<ElectricityProvider[]> {
    if (this.cache && this.now() - this.cache.at < this.ttl) return Promise.resolve(this.cache.providers);
    // One provider-list call at a time even when many sales start together.
    this.inflight ??= this.api.vending
      .providers({})
      .then((res) => {
        this.cache = { at: this.now(), providers: res.data };
        return res.data;
      })
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }
}

type VendingDeps = FlowDeps & { providers: ProviderCache };

/** The electricity providers (H1), cached. Returns the provider codes. (Flows started before the one-step lookup.) */
function vendListProviders({ providers }: VendingDeps): Promise<{ code: string; name?: string }[]> {
  return read(VEND_PROVIDER_LIST_STEP, async () =>
    (await providers.providers()).map((p) => ({ code: p.code, ...(p.name ? { name: p.name } : {}) })),
  );
}

/** Looks up the meter (H2). Read-only. (Flows started before the one-step lookup.) */
function vendLookupMeter({ api }: VendingDeps, req: MeterRequest): Promise<MeterInfo> {
  return read('meter lookup (H2)', async () => {
    const { data: d } = await api.vending.lookup(req, { requestId: Context.current().info.activityId });
    return {
      reference: d.reference,
      ...(d.customer_name ? { customer_name: d.customer_name } : {}),
      ...(d.minimum_vend != null ? { minimum_vend: Number(d.minimum_vend) } : {}),
      ...(d.meter_type ? { meter_type: d.meter_type } : {}),
      ...(d.provider ? { provider: d.provider } : {}),
      ...(d.outstanding_debt != null ? { outstanding_debt: String(d.outstanding_debt) } : {}),
    };
  });
}

/**
 * The provider list (cached) and the meter lookup in one activity: one workflow task and one activity dispatch fewer per sale
 * than the two steps apart (docs/performance.md). Both are reads, so a retry of the whole is safe.
 * A failure of the provider list says so first (VEND_PROVIDER_LIST_STEP), so the flow reports which step failed.
 */
async function vendLookupListedMeter(d: VendingDeps, req: MeterRequest): Promise<ListedMeterLookup> {
  const listed = (await vendListProviders(d)).some((p) => p.code.toUpperCase() === req.provider);
  if (!listed) return { listed: false };
  return { listed: true, meter: await vendLookupMeter(d, req) };
}

/** Purchases electricity (H3), once. The workflow never calls it again unless the lookup by reference proved it unknown. */
function vendPurchase(
  { api, log }: VendingDeps,
  req: { reference: string; amount: number; phone_number: string; email: string },
  o: { attempt: number; timeoutMs?: number },
): Promise<VendRecord> {
  const call = {
    log,
    what: 'electricity purchase (H3)',
    where: { reference: req.reference, attempt: o.attempt },
    call: 'vend purchase',
  };
  const requestId = `${Context.current().info.activityId}-a${o.attempt}`;
  const purchase = async () =>
    toVendRecord((await api.vending.purchase(req, { timeoutMs: o.timeoutMs, requestId })).data);
  return sendOnce(call, purchase, (rec) => ({ status: rec.status }));
}

/** The vend by reference (H4). Not found (404, or no matching row) is an answer, not a failure. */
function vendFindByReference({ api }: VendingDeps, req: { reference: string }): Promise<VendCheckOutcome> {
  const absent = {
    notFound: 'vendingByReference' as const,
    answer: { found: false as const },
    otherNotFound: 'vend lookup 404 that is not the documented "transaction not found"',
  };
  const find = async (): Promise<VendCheckOutcome> => {
    const res = await api.vending.transactions({ reference: req.reference }, { requestId: attemptRequestId() });
    const rows = Array.isArray(res.data) ? res.data : res.data ? [res.data] : [];
    const hit = rows.find((r) => String(r.reference) === req.reference);
    return hit ? { found: true, transaction: toVendRecord(hit) } : { found: false };
  };
  return read('vending transaction by reference (H4)', find, absent);
}

export function createVendingActivities(deps: ActivityDeps, opts: VendingActivityOptions = {}) {
  const providers = new ProviderCache(deps.api, opts.providerCacheTtlMs ?? 60 * 60 * 1000, opts.now ?? Date.now);
  const d: VendingDeps = { ...flowDeps(deps, 'vend'), providers };
  return bindActivities(d, {
    vendListProviders,
    vendLookupMeter,
    vendLookupListedMeter,
    vendPurchase,
    vendFindByReference,
  });
}

export type VendingActivities = ReturnType<typeof createVendingActivities>;
