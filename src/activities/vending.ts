// Electricity vending activities (H1-H4).
//
// H1 providers are cached in memory per worker (TTL, default 1 hour): the list changes
// rarely and every sale needs it. H3 purchase is money-moving: made once per activity attempt,
// scheduled with maximumAttempts 1 and a short heartbeat timeout (it heartbeats while the call is
// open), every failure non-retryable with a deliberate type; the workflow checks by reference
// (H4) before any new attempt. A 200 is not a success: the workflow reads the record's status.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { isDocumentedNotFound, NotFoundError, type ElectricityProvider, type VendingTransaction } from '../api';
import type { ActivityDeps } from './deps';
import { heartbeatWhile } from './heartbeat';
import {
  VEND_PROVIDER_LIST_STEP,
  type ListedMeterLookup,
  type MeterInfo,
  type VendCheckOutcome,
  type VendRecord,
} from '../shared/vending';
import { toActivityFailure } from './failures';
import { FailureTypes } from '../shared/failures';

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

export function createVendingActivities(deps: ActivityDeps, opts: VendingActivityOptions = {}) {
  const { api, logger } = deps;
  const log = logger.child({ flow: 'vend' });
  const ttl = opts.providerCacheTtlMs ?? 60 * 60 * 1000;
  const now = opts.now ?? Date.now;
  let cache: { at: number; providers: ElectricityProvider[] } | undefined;
  let inflight: Promise<ElectricityProvider[]> | undefined;

  async function providers(): Promise<ElectricityProvider[]> {
    if (cache && now() - cache.at < ttl) return cache.providers;
    // One H1 call at a time even when many sales start together.
    inflight ??= api.vending
      .providers({})
      .then((res) => {
        cache = { at: now(), providers: res.data };
        return res.data;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  }

  type MeterRequest = { meter_no: string; meter_type: 'prepaid' | 'postpaid'; provider: string };

  async function listProviders(): Promise<{ code: string; name?: string }[]> {
    try {
      return (await providers()).map((p) => ({ code: p.code, ...(p.name ? { name: p.name } : {}) }));
    } catch (err) {
      throw toActivityFailure(err, { moneyMoving: false, what: VEND_PROVIDER_LIST_STEP });
    }
  }

  async function lookupMeter(req: MeterRequest): Promise<MeterInfo> {
    try {
      const res = await api.vending.lookup(req, { requestId: Context.current().info.activityId });
      const d = res.data;
      return {
        reference: d.reference,
        ...(d.customer_name ? { customer_name: d.customer_name } : {}),
        ...(d.minimum_vend != null ? { minimum_vend: Number(d.minimum_vend) } : {}),
        ...(d.meter_type ? { meter_type: d.meter_type } : {}),
        ...(d.provider ? { provider: d.provider } : {}),
        ...(d.outstanding_debt != null ? { outstanding_debt: String(d.outstanding_debt) } : {}),
      };
    } catch (err) {
      throw toActivityFailure(err, { moneyMoving: false, what: 'H2 meter lookup' });
    }
  }

  return {
    /** H1, cached. Returns the provider codes. (Flows started before the one-step lookup.) */
    vendListProviders: listProviders,

    /** H2. Read-only. (Flows started before the one-step lookup.) */
    vendLookupMeter: lookupMeter,

    /**
     * H1 (cached) and H2 in one activity: one workflow task and one activity dispatch fewer per sale
     * than the two steps apart (docs/performance.md). Both are reads, so a retry of the whole is safe.
     * A failure of H1 says so first (VEND_PROVIDER_LIST_STEP), so the flow reports which step failed.
     */
    async vendLookupListedMeter(req: MeterRequest): Promise<ListedMeterLookup> {
      const listed = (await listProviders()).some((p) => p.code.toUpperCase() === req.provider);
      if (!listed) return { listed: false };
      return { listed: true, meter: await lookupMeter(req) };
    },

    /** H3, once. The workflow never calls it again unless H4 proved the reference unknown. */
    async vendPurchase(
      req: { reference: string; amount: number; phone_number: string; email: string },
      o: { attempt: number; timeoutMs?: number },
    ): Promise<VendRecord> {
      const ctx = Context.current();
      const where = {
        workflowId: ctx.info.workflowExecution?.workflowId,
        reference: req.reference,
        attempt: o.attempt,
      };
      try {
        // Heartbeats while the call is open: a worker lost mid-call is noticed within the heartbeat timeout.
        const res = await heartbeatWhile(
          api.vending.purchase(req, { timeoutMs: o.timeoutMs, requestId: `${ctx.info.activityId}-a${o.attempt}` }),
        );
        const rec = toVendRecord(res.data);
        log.info({ ...where, status: rec.status }, 'vend purchase answered');
        return rec;
      } catch (err) {
        const failure = toActivityFailure(err, { moneyMoving: true, what: 'H3 electricity purchase' });
        log.warn({ ...where, type: failure.type }, 'vend purchase without an answer');
        throw failure;
      }
    },

    /** H4 by reference. Not found (404, or no matching row) is an answer, not a failure. */
    async vendFindByReference(req: { reference: string }): Promise<VendCheckOutcome> {
      try {
        const res = await api.vending.transactions(
          { reference: req.reference },
          { requestId: `${Context.current().info.activityId}-${Context.current().info.attempt}` },
        );
        const rows = Array.isArray(res.data) ? res.data : res.data ? [res.data] : [];
        const hit = rows.find((r) => String(r.reference) === req.reference);
        return hit ? { found: true, transaction: toVendRecord(hit) } : { found: false };
      } catch (err) {
        if (isDocumentedNotFound('vendingByReference', err)) return { found: false };
        throw toActivityFailure(
          err instanceof NotFoundError
            ? ApplicationFailure.create({
                type: FailureTypes.ServiceError,
                message: `H4 404 that is not the documented "transaction not found": ${err.message}`,
                nonRetryable: true,
              })
            : err,
          { moneyMoving: false, what: 'H4 vending transaction by reference' },
        );
      }
    },
  };
}

export type VendingActivities = ReturnType<typeof createVendingActivities>;
