// SMS (G1-G3) workflows. See src/shared/sms.ts for the inputs and results, docs/flows-sms.md for
// the choices.
//
// smsSendWorkflow — the instant send (G1) of a list:
//   1. input rules (zod, shared with the starter); each message checked on its own: a bad one is
//      `invalid` (field and rule named), an exact repeat `duplicate`; the others go on
//   2. batches of at most `batchSize` (default 100), never the same number twice in one batch
//   3. each batch sent ONCE (activity maximumAttempts 1). The spec gives the instant send no reference and no
//      way to look a send up, so a lost answer cannot be checked: its numbers are
//      `outcome_unknown` and are never resent. Only a request that provably never left
//      (connection refused: 'Transient') is sent again, up to `notSentRetries`.
//      answered   → per number: `sent` (cost, transaction_id) / `failed` (the service's error) /
//                   `outcome_unknown` (named in neither list)
//      400/404    → the batch's numbers `failed` with the service's message; next batch goes on
//      401/403    → `failed`; the later batches are skipped (`not_sent`): the key is refused
//      lost / 5xx → `outcome_unknown`; next batch goes on
//   4. result: one line per input entry, counts, cost per currency (exact decimal sums).
//   Cancel: the batch in flight is let finish (non-cancellable, its answer recorded); the later
//   batches are `not_sent`; the workflow completes with `cancelRequested`.
//
// smsCampaignWorkflow — the campaign create (G2) once, then follow (G3):
//   - before the campaign create, the campaign list lists the ids already carrying the name; the campaign create is
//     sent once (a provable "never left" may be resent). A lost answer is searched for in the campaign list by name:
//     exactly one new id is the campaign; none or several end `outcome_unknown` — it is never created again.
//   - scheduled: a durable timer until `sscheduled_dor` (checking every `scheduledCheckEvery` that
//     the campaign is still listed), then the campaign list polls on a doubling backoff until success or failed,
//     `not_found` after `missingReads` reads without it, `still_pending` after `followFor`.
//   - cancel: a campaign create in flight is let finish (the result names the campaign, `still_pending`, or
//     `outcome_unknown` if its answer was lost); a cancel while following cancels the workflow
//     (the campaign itself goes on; follow it again by uuid).
//
// smsCampaignFollowWorkflow — the follow part alone, for a campaign known by uuid.
//
// Layout, top to bottom: the three workflow functions (a few lines each), then `SmsSendFlow` and
// `SmsCampaignFlow` (both campaign workflows), each with its state, its handlers (`listen`), the
// main steps (`run…`), then the helpers the steps share.
import type { z } from 'zod';
import {
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { SmsActivities } from '../activities/sms';
import {
  SMS_DEFAULT_BATCH_SIZE,
  SmsCampaignFollowInputSchema,
  SmsCampaignInputSchema,
  SmsSendInputSchema,
  addDecimals,
  checkSmsMessages,
  countSmsResults,
  matchSmsBatch,
  planSmsBatches,
  smsCampaignStateQuery,
  smsDurationMs,
  smsSendOverallStatus,
  smsSendStateQuery,
  SMS_SEND_RESOLVE_OUTCOMES,
  SMS_CAMPAIGN_RESOLVE_OUTCOMES,
  type SmsBatchAnswer,
  type SmsCampaignFollowInput,
  type SmsCampaignInput,
  type SmsCampaignLookup,
  type SmsCampaignRecord,
  type SmsCampaignResult,
  type SmsCampaignState,
  type SmsCampaignStep,
  type SmsEntry,
  type SmsNumberResult,
  type SmsSendInput,
  type SmsSendParsedInput,
  type SmsSendResult,
  type SmsSendState,
} from '../shared/sms';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { awaitFinal, listenForResolution, parkedRequery } from './steps/unknown-outcome';
import { MerchantEvents, type EventTypes } from './steps/merchant-events';
import type { MerchantEventTarget } from '../shared/merchant-event';

/** A send's merchant events (docs/events.md): a send that reached some numbers succeeded. */
const SMS_SEND_EVENT_TYPES: EventTypes = {
  sent: 'sms.batch.succeeded',
  partially_sent: 'sms.batch.succeeded',
  not_sent: 'sms.batch.failed',
  outcome_unknown: 'sms.batch.needs_attention',
};
/** A campaign's merchant events: still_pending ended the follow without an answer, for a person to follow again. */
const SMS_CAMPAIGN_EVENT_TYPES: EventTypes = {
  success: 'sms.campaign.succeeded',
  failed: 'sms.campaign.failed',
  rejected: 'sms.campaign.failed',
  not_found: 'sms.campaign.failed',
  outcome_unknown: 'sms.campaign.needs_attention',
  still_pending: 'sms.campaign.needs_attention',
};
import { FailureTypes, REFUSAL_TYPES, failureMessage } from '../shared/failures';
import { PAGED_READ, moneySend } from './steps/activity-options';
import { failureLabel, invalidInput, parseFlowInput } from './steps/flow-input';
import { UNSENT_RESEND_BACKOFF } from './steps/durations';
import { stateCopy } from './steps/state-copy';

export async function smsSendWorkflow(raw: SmsSendInput): Promise<SmsSendResult> {
  const flow = new SmsSendFlow(parseFlowInput(SmsSendInputSchema, raw, 'SMS send'));
  flow.listen();
  return told(flow.events, SMS_SEND_EVENT_TYPES, await flow.run());
}

export async function smsCampaignWorkflow(raw: SmsCampaignInput): Promise<SmsCampaignResult> {
  const { reference, campaign, options = {}, notify } = parseFlowInput(SmsCampaignInputSchema, raw, 'SMS campaign');
  const flow = new SmsCampaignFlow(
    { reference, name: campaign.name, status: 'validating' },
    reference,
    options,
    notify,
  );
  flow.listen();
  return told(flow.events, SMS_CAMPAIGN_EVENT_TYPES, await flow.runCreate(campaign));
}

export async function smsCampaignFollowWorkflow(raw: SmsCampaignFollowInput): Promise<SmsCampaignResult> {
  const parsed = parseFlowInput(SmsCampaignFollowInputSchema, raw, 'SMS campaign follow');
  const { campaign_id, name, scheduled_for, options = {}, notify } = parsed;
  const id = campaign_id.toLowerCase();
  const flow = new SmsCampaignFlow(
    { campaignId: id, ...(name ? { name } : {}), status: 'following' },
    id,
    options,
    notify,
  );
  flow.listen();
  const result = await flow.runFollow(scheduled_for !== undefined ? Date.parse(scheduled_for) : undefined);
  return told(flow.events, SMS_CAMPAIGN_EVENT_TYPES, result);
}

/** The flow's final outcome told (docs/events.md: nothing without a target), then returned. */
async function told<R extends { status: string; message?: string }>(
  events: MerchantEvents,
  types: EventTypes,
  result: R,
): Promise<R> {
  await events.emitFor(types, { status: result.status, reason: result.message });
  return result;
}

// ---- the instant send (G1) ------------------------------------------------------------------------------------------

/**
 * The deadline of one SMS call that sends (an instant send (G1) batch, a campaign create (G2)); its attempt outlives it
 * by IN_FLIGHT_MARGIN_MS.
 */
const SMS_SEND_HTTP_TIMEOUT_MS = 30_000;

const SEND_DEFAULTS = {
  sendTimeoutMs: SMS_SEND_HTTP_TIMEOUT_MS,
  notSentRetries: 2,
  retryBackoff: UNSENT_RESEND_BACKOFF,
} as const;
const CANCELLED = 'not sent: the send was cancelled';

type SendOptions = NonNullable<SmsSendParsedInput['options']>;
type SendRequest = Omit<SmsSendParsedInput, 'options'>;

/** One instant send (G1) of a list, batch by batch. */
class SmsSendFlow {
  // --- state ---

  /** What the query answers. */
  private readonly state: SmsSendState;
  private readonly input: SendRequest;
  private readonly options: SendOptions;
  private readonly timeoutMs: number;
  private readonly planned: SmsEntry[][];
  /** Input position → its result (rejected entries from the start, batched ones as they settle). */
  private readonly numbers = new Map<number, SmsNumberResult>();
  /** The workflow's own scope: a cancel stops the batches not yet sent. */
  private readonly root = CancellationScope.current();
  /** Why the later batches are not sent (the key was refused, or the send was cancelled). */
  private stopReason: string | undefined;
  /** The instant send (G1): one attempt, heartbeating; its start-to-close outlives the call's own deadline. */
  private readonly sendBatch: SmsActivities['smsSendBatch'];
  /** Where the send's outcome is told (nothing without the input's `notify`). */
  readonly events: MerchantEvents;

  constructor({ options = {}, ...input }: SmsSendParsedInput) {
    const checked = checkSmsMessages(input.messages);
    if (options.invalidMessages === 'refuse' && checked.issues.length > 0)
      throw invalidInput('SMS send', checked.issues);
    this.input = input;
    this.options = options;
    this.events = new MerchantEvents(input.notify, 'sms-send', input.reference);
    this.timeoutMs = options.sendTimeoutMs ?? SEND_DEFAULTS.sendTimeoutMs;
    const batchSize = options.batchSize ?? SMS_DEFAULT_BATCH_SIZE;
    this.planned = planSmsBatches(checked.valid, batchSize);
    for (const r of checked.rejected) this.numbers.set(r.index, r);
    this.state = {
      reference: input.reference,
      status: 'validating',
      batchSize,
      batches: this.planned.map((b, i) => ({ batch: i + 1, size: b.length, attempts: 0, outcome: 'waiting' })),
      counts: { ...countSmsResults([]), total: input.messages.length },
      costByCurrency: {},
    };
    this.refreshCounts();
    this.sendBatch = proxyActivities<SmsActivities>(moneySend(this.timeoutMs)).smsSendBatch;
  }

  // --- handlers ---

  listen(): void {
    setHandler(smsSendStateQuery, () => ({
      ...this.state,
      batches: this.state.batches.map((b) => ({ ...b })),
      counts: { ...this.state.counts },
      costByCurrency: { ...this.state.costByCurrency },
    }));
    void this.root.cancelRequested.catch(() => {
      this.state.cancelRequested = true;
    });
  }

  // --- main steps ---

  async run(): Promise<SmsSendResult> {
    upsertSearchAttributes(
      paymentSearchAttributes({ flow: 'sms-send', reference: this.input.reference, status: 'validating' }),
    );
    this.setStatus('sending');
    for (let i = 0; i < this.planned.length; i++) {
      if (this.stopReason === undefined && this.root.consideredCancelled) this.stopReason = CANCELLED;
      if (this.stopReason !== undefined) {
        const rec = this.state.batches[i];
        rec.outcome = 'skipped';
        rec.detail = this.stopReason;
        this.settleBatch(i, 'not_sent', this.stopReason);
      } else await this.send(i);
      this.refreshCounts();
    }
    const result = this.result();
    // A cancelled send ends at once (the caller wants it gone); its unknown numbers stay reported.
    if (result.counts.outcome_unknown === 0 || this.state.cancelRequested) return result;
    return this.parkUnknownNumbers(result.message);
  }

  /**
   * Numbers whose batch answer was lost may have been sent: the flow stays open, parked as
   * outcome_unknown (PaymentStatus), until an operator says what happened to them (resolveOutcome,
   * `cli ops resolve`: sent or failed). The instant send (G1) has no reference and no look-up (spec), so nothing can
   * be requeried in the background; they are never resent.
   */
  private async parkUnknownNumbers(why: string): Promise<SmsSendResult> {
    const resolved = listenForResolution(SMS_SEND_RESOLVE_OUTCOMES);
    this.setStatus('outcome_unknown');
    await this.events.emitFor(SMS_SEND_EVENT_TYPES, { status: 'outcome_unknown', reason: why });
    // Not cancellable itself: a cancel while parked ends the wait and reports the numbers as unknown.
    await CancellationScope.nonCancellable(() =>
      condition(() => resolved() !== undefined || this.root.consideredCancelled),
    );
    const resolution = resolved();
    if (!resolution) return this.result(); // cancelled while parked: reported as unknown
    const { outcome, operator, reason } = resolution;
    for (const [index, r] of this.numbers)
      if (r.status === 'outcome_unknown')
        this.numbers.set(index, {
          ...r,
          status: outcome as (typeof SMS_SEND_RESOLVE_OUTCOMES)[number], // checked by the validator
          error: `resolved by ${operator}: ${reason} (was: ${r.error ?? 'unknown'})`,
        });
    this.state.resolution = resolution;
    return this.result();
  }

  /** Batch `i` sent once; sent again only when its request provably never left. */
  private async send(i: number): Promise<void> {
    const batch = i + 1;
    const rec = this.state.batches[i];
    const request = {
      sender_id: this.input.sender_id,
      messages: this.planned[i].map((e) => ({ phone_number: e.phone_number, message: e.message })),
    };
    for (;;) {
      rec.attempts += 1;
      rec.outcome = 'sending';
      try {
        // Not cancellable: a cancel must not turn a batch the service may be sending into an unknown.
        const answer = await CancellationScope.nonCancellable(() =>
          this.sendBatch(request, { batch, attempt: rec.attempts, timeoutMs: this.timeoutMs }),
        );
        this.recordAnswer(i, answer);
        return;
      } catch (err) {
        if (!(await this.afterFailure(i, err))) return;
      }
    }
  }

  /** What a failed instant send (G1) means for batch `i`'s numbers; true when the batch is to be sent again. */
  private async afterFailure(i: number, err: unknown): Promise<boolean> {
    const batch = i + 1;
    const rec = this.state.batches[i];
    const type = failureLabel(err);
    const message = failureMessage(err);
    rec.detail = `${type}: ${message}`;
    if (type === FailureTypes.Transient) {
      // The request never left: the only case a batch is sent again.
      if (rec.attempts <= (this.options.notSentRetries ?? SEND_DEFAULTS.notSentRetries)) {
        try {
          await sleep(smsDurationMs(this.options.retryBackoff ?? SEND_DEFAULTS.retryBackoff));
          return true;
        } catch (e) {
          if (!isCancellation(e)) throw e;
          this.stopReason = CANCELLED;
        }
      }
      rec.outcome = 'not_sent';
      const why = `batch ${batch} never reached the service (${message}) after ${rec.attempts} attempt(s)`;
      this.settleBatch(i, 'not_sent', why);
    } else if (REFUSAL_TYPES.includes(type)) {
      rec.outcome = 'refused';
      this.settleBatch(i, 'failed', `the service refused batch ${batch}: ${message}; nothing in it was sent`);
      if (type === FailureTypes.Unauthorized)
        this.stopReason = `not sent: the service refused the key on batch ${batch} (${message})`;
    } else {
      rec.outcome = 'outcome_unknown';
      const why = `the answer to batch ${batch} was lost (${type}: ${message}): it may have been sent; not resent`;
      this.settleBatch(i, 'outcome_unknown', why);
    }
    return false;
  }

  /** The result: one line per input entry, counts, cost per currency. */
  private result(): SmsSendResult {
    const list = this.input.messages.map((_, index) => this.numbers.get(index)!);
    const counts = countSmsResults(list);
    const status = smsSendOverallStatus(counts);
    const costByCurrency = this.state.costByCurrency;
    const currencies = Object.keys(costByCurrency);
    const costText = currencies.map((c) => `${costByCurrency[c]} ${c}`).join(' + ');
    const parts = [
      `sent ${counts.sent} of ${counts.total}`,
      ...(['failed', 'invalid', 'duplicate', 'not_sent', 'outcome_unknown'] as const)
        .filter((k) => counts[k] > 0)
        .map((k) => `${counts[k]} ${k}`),
    ];
    this.setStatus(status);
    this.state.counts = counts;
    return {
      ...this.state,
      batches: this.state.batches.map((b) => ({ ...b })),
      status,
      message: `${parts.join(', ')}${costText ? `; cost ${costText}` : ''}${counts.outcome_unknown > 0 ? ' (outcome_unknown numbers may have been sent and are never resent automatically)' : ''}`,
      numbers: list,
      ...(currencies.length === 1 ? { totalCost: costByCurrency[currencies[0]], currency: currencies[0] } : {}),
    };
  }

  // --- helpers ---

  /** Batch `i`'s answer on its numbers, and its cost. */
  private recordAnswer(i: number, answer: SmsBatchAnswer): void {
    const rec = this.state.batches[i];
    const matched = matchSmsBatch(i + 1, this.planned[i], answer);
    for (const r of matched.results) this.numbers.set(r.index, r);
    rec.outcome = 'answered';
    if (answer.batch_id) rec.batch_id = answer.batch_id;
    const costs = matched.results.flatMap((r) => (r.cost !== undefined ? [r.cost] : []));
    const total = answer.total_cost ?? (costs.length > 0 ? costs.reduce(addDecimals, '0') : undefined);
    const currency = answer.currency ?? 'unknown';
    if (total !== undefined) {
      rec.total_cost = total;
      rec.currency = currency;
      this.state.costByCurrency[currency] = addDecimals(this.state.costByCurrency[currency] ?? '0', total);
    }
    if (matched.unmatchedErrors.length > 0) rec.unmatched_errors = matched.unmatchedErrors;
    if (matched.unmatchedSent > 0) rec.unmatched_sent = matched.unmatchedSent;
    if (answer.message) rec.detail = answer.message;
  }

  private settleBatch(i: number, status: SmsNumberResult['status'], error: string): void {
    for (const e of this.planned[i])
      this.numbers.set(e.index, { index: e.index, phone_number: e.phone_number, status, batch: i + 1, error });
  }

  private refreshCounts(): void {
    this.state.counts = { ...countSmsResults([...this.numbers.values()]), total: this.input.messages.length };
  }

  private setStatus(status: SmsSendState['status']): void {
    this.state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  }
}

// ---- the campaign create (G2), the campaign list (G3) ---------------------------------------------------------------

const CAMPAIGN_DEFAULTS = {
  /** A pending campaign is read often at first (most finish soon after their send time)… */
  pollInterval: '30s',
  /** …then the wait doubles up to this, so a slow one costs few reads. */
  maxPollInterval: '5 minutes',
  /** Still pending this long after its send time: the flow ends still_pending (followed again on request). */
  followFor: '24 hours',
  /** While waiting for a scheduled send time: a few reads a day notice a campaign deleted meanwhile. */
  scheduledCheckEvery: '6 hours',
  missingReads: 3,
  lostCreateReads: 3,
  /**
   * After the answer of the campaign create (G2) was lost, the wait before each read by name: a new campaign may not be
   * listed at once.
   */
  lostCreateSettle: '5s',
  createTimeoutMs: SMS_SEND_HTTP_TIMEOUT_MS,
  pageSize: 100,
  notSentRetries: 2,
  retryBackoff: UNSENT_RESEND_BACKOFF,
} as const;
/** Poll steps kept in the state (older ones are only counted). */
const POLL_STEPS_KEPT = 20;

type CampaignParsedInput = z.output<typeof SmsCampaignInputSchema>;
type CampaignOptions = NonNullable<CampaignParsedInput['options']>;
type CampaignCreate = CampaignParsedInput['campaign'];
/**
 * What the sends of the campaign create (G2) came to: the campaign, an answer lost (never sent again), or the flow's
 * end.
 */
type Created = { created: SmsCampaignRecord } | { lost: string } | { ended: SmsCampaignResult };

/** One campaign: created once and followed (smsCampaignWorkflow), or only followed (smsCampaignFollowWorkflow). */
class SmsCampaignFlow {
  // --- state ---

  /** What the query answers. */
  private readonly state: SmsCampaignState;
  private campaign: SmsCampaignRecord | undefined;
  /** Consecutive campaign list (G3) reads that did not list the campaign. */
  private misses = 0;
  private readonly pageSize: number;
  private readonly reads = proxyActivities<SmsActivities>(PAGED_READ);
  /** Where the campaign's outcome is told (nothing without the input's `notify`). */
  readonly events: MerchantEvents;

  constructor(
    init: Omit<SmsCampaignState, 'polls' | 'steps'>,
    /** PaymentReference: the merchant's reference, or the campaign's uuid when only followed. */
    private readonly reference: string,
    private readonly options: CampaignOptions,
    notify: MerchantEventTarget | undefined,
  ) {
    this.state = { ...init, polls: 0, steps: [] };
    this.events = new MerchantEvents(notify, 'sms-campaign', reference);
    this.pageSize = options.pageSize ?? CAMPAIGN_DEFAULTS.pageSize;
  }

  // --- handlers ---

  listen(): void {
    setHandler(smsCampaignStateQuery, () => stateCopy(this.state));
    void CancellationScope.current().cancelRequested.catch(() => {
      this.state.cancelRequested = true;
    });
  }

  // --- main steps ---

  /** smsCampaignWorkflow: the campaign create (G2) once (found by name if its answer is lost), then follow it. */
  async runCreate(campaign: CampaignCreate): Promise<SmsCampaignResult> {
    this.showStart();
    const o = this.options;
    // Sent under the spec's own field names; an unscheduled campaign without a time gets the creation time.
    const body = { ...campaign, sscheduled_dor: campaign.sscheduled_dor ?? new Date(Date.now()).toISOString() };
    this.setStatus('creating');
    // The ids already carrying this name: a lost campaign create (G2) answer is recognised as the one new id.
    let before: string[];
    try {
      before = await this.reads.smsListCampaignIdsByName({ name: campaign.name, pageSize: this.pageSize });
    } catch (err) {
      if (isCancellation(err)) throw err;
      return this.finish(
        'rejected',
        `the campaign list (G3) could not be read before the create (${failureMessage(err)}); nothing was created`,
      );
    }
    const sent = await this.create(body, o.createTimeoutMs ?? CAMPAIGN_DEFAULTS.createTimeoutMs);
    if ('ended' in sent) return sent.ended;
    if ('created' in sent) {
      this.campaign = sent.created;
      this.state.campaignId = sent.created.uuid.toLowerCase();
    }
    if (CancellationScope.current().consideredCancelled) {
      return 'created' in sent
        ? this.finish(
            'still_pending',
            `cancelled after campaign ${this.state.campaignId} was created (${sent.created.status ?? 'status not given'}); it is not followed (cli: sms campaigns follow --id ${this.state.campaignId})`,
          )
        : this.finish(
            'outcome_unknown',
            `cancelled after the answer to the campaign create (G2) was lost (${sent.lost}): campaign "${campaign.name}" may exist (look for it by name in the campaign list, G3); it is not created again`,
          );
    }
    const scheduled = campaign.is_scheduled && campaign.sscheduled_dor !== undefined;
    const scheduledAt = scheduled ? Date.parse(campaign.sscheduled_dor!) : undefined;
    if ('lost' in sent) {
      const unknown = await this.searchLost(campaign.name, before, sent.lost);
      if (unknown) return this.parkLostCreate(campaign.name, before, unknown, scheduledAt);
    }
    return this.follow(scheduledAt);
  }

  /** smsCampaignFollowWorkflow: the follow part alone. */
  async runFollow(scheduledAt: number | undefined): Promise<SmsCampaignResult> {
    this.showStart();
    return this.follow(scheduledAt);
  }

  /** The campaign create (G2), sent once; sent again only when it provably never left. */
  private async create(body: CampaignCreate & { sscheduled_dor: string }, timeoutMs: number): Promise<Created> {
    const o = this.options;
    const { smsCreateCampaign } = proxyActivities<SmsActivities>(moneySend(timeoutMs));
    for (let attempt = 1; ; attempt++) {
      try {
        // Not cancellable: a cancel lets the campaign create (G2) finish, so its answer is known.
        const created = await CancellationScope.nonCancellable(() => smsCreateCampaign(body, { attempt, timeoutMs }));
        this.record({ op: 'create', attempt, outcome: 'created', detail: created.status });
        return { created };
      } catch (err) {
        const type = failureLabel(err);
        const message = failureMessage(err);
        if (type === FailureTypes.Transient) {
          this.record({ op: 'create', attempt, outcome: 'not_sent', detail: message });
          if (attempt <= (o.notSentRetries ?? CAMPAIGN_DEFAULTS.notSentRetries)) {
            await sleep(smsDurationMs(o.retryBackoff ?? CAMPAIGN_DEFAULTS.retryBackoff));
            continue;
          }
          const why = `the campaign create (G2) never reached the service (${message}) after ${attempt} attempt(s); nothing was created`;
          return { ended: this.finish('rejected', why) };
        }
        if (REFUSAL_TYPES.includes(type)) {
          this.record({ op: 'create', attempt, outcome: 'refused', detail: message });
          return {
            ended: this.finish('rejected', `the service refused the campaign: ${message}; nothing was created`),
          };
        }
        this.record({ op: 'create', attempt, outcome: 'unknown', detail: `${type}: ${message}` });
        return { lost: `${type}: ${message}` };
      }
    }
  }

  /**
   * The answer of the campaign create (G2) was lost: it is never sent again; the campaign list (G3) by name tells
   * whether it landed (sets campaignId), or the flow ends.
   */
  private async searchLost(name: string, before: string[], lost: string): Promise<SmsCampaignResult | undefined> {
    const o = this.options;
    this.setStatus('searching');
    const reads = o.lostCreateReads ?? CAMPAIGN_DEFAULTS.lostCreateReads;
    for (let read = 1; read <= reads && this.state.campaignId === undefined; read++) {
      await sleep(Math.max(1, smsDurationMs(o.lostCreateSettle ?? CAMPAIGN_DEFAULTS.lostCreateSettle)));
      let ids: string[];
      try {
        ids = await this.reads.smsListCampaignIdsByName({ name, pageSize: this.pageSize });
      } catch (err) {
        if (isCancellation(err)) throw err;
        this.record({ op: 'search', read, outcome: 'error', detail: failureMessage(err) });
        continue;
      }
      const fresh = ids.filter((id) => !before.includes(id));
      if (fresh.length > 1) {
        this.record({ op: 'search', read, outcome: 'ambiguous', detail: fresh.join(', ') });
        return this.finish(
          'outcome_unknown',
          `the answer to the campaign create (G2) was lost (${lost}) and the campaign list (G3) shows ${fresh.length} new campaigns named "${name}" (${fresh.join(', ')}); check which is this one; nothing is created again`,
        );
      }
      if (fresh.length === 1) {
        this.record({ op: 'search', read, outcome: 'found', detail: fresh[0] });
        this.state.campaignId = fresh[0];
      } else this.record({ op: 'search', read, outcome: 'not_found' });
    }
    if (this.state.campaignId !== undefined) return undefined;
    return this.finish(
      'outcome_unknown',
      `the answer to the campaign create (G2) was lost (${lost}) and the campaign list (G3) did not list a new campaign named "${name}" in ${reads} read(s): it may not exist or not be listed yet; it is NOT created again (follow it by uuid once known, or create it under a new reference)`,
    );
  }

  /**
   * A lost campaign create (G2) answer the campaign list (G3) could not settle (none or several new ids) is parked, not
   * final: the campaign list is read by name again on a backoff; exactly one new id is the campaign, then followed. An
   * operator may end it with resolveOutcome (`cli ops resolve`: success, failed, or rejected when it was never
   * created). A cancel while parked cancels the workflow, as while following.
   */
  private async parkLostCreate(
    name: string,
    before: string[],
    parked: SmsCampaignResult,
    scheduledAt: number | undefined,
  ): Promise<SmsCampaignResult> {
    const resolution = listenForResolution(
      SMS_CAMPAIGN_RESOLVE_OUTCOMES,
      () => this.state.status === 'outcome_unknown',
    );
    const settled = await awaitFinal<string>({
      requery: async () => {
        const ids = await this.reads.smsListCampaignIdsByName({ name, pageSize: this.pageSize });
        const fresh = ids.filter((id) => !before.includes(id));
        return fresh.length === 1 ? { found: true, record: fresh[0] } : { found: false };
      },
      isFinal: () => true,
      absentIsFinal: () => false, // not listed proves nothing: the campaign list (G3) may lag, and the campaign create (G2) is never sent again
      startAs: 'outcome_unknown',
      setStatus: () => undefined, // finish() already shows outcome_unknown
      onParked: () =>
        this.events.emitFor(SMS_CAMPAIGN_EVENT_TYPES, { status: 'outcome_unknown', reason: parked.message }),
      resolution,
      ...parkedRequery(),
    });
    if (settled.kind === 'resolved') {
      const r = settled.resolution;
      this.state.resolution = r;
      return this.finish(
        r.outcome as (typeof SMS_CAMPAIGN_RESOLVE_OUTCOMES)[number],
        `resolved by ${r.operator}: ${r.reason} (parked: ${parked.message})`,
      );
    }
    if (settled.kind === 'absent') return parked; // not reached: absentIsFinal is false
    this.record({ op: 'search', read: 0, outcome: 'found', detail: settled.record });
    this.state.campaignId = settled.record;
    return this.follow(scheduledAt);
  }

  /**
   * Waits for the send time (durably), then reads the campaign list (G3) until success, failed, not listed, or
   * followFor.
   */
  private async follow(scheduledAt: number | undefined): Promise<SmsCampaignResult> {
    const o = this.options;
    const id = this.state.campaignId!;
    if (scheduledAt !== undefined && scheduledAt > Date.now()) {
      const done = await this.waitForSendTime(scheduledAt);
      if (done) return done;
    }
    this.setStatus('following');
    const followFor = smsDurationMs(o.followFor ?? CAMPAIGN_DEFAULTS.followFor);
    const maxWait = Math.max(1, smsDurationMs(o.maxPollInterval ?? CAMPAIGN_DEFAULTS.maxPollInterval));
    const deadline = Date.now() + followFor;
    let wait = Math.max(1, smsDurationMs(o.pollInterval ?? CAMPAIGN_DEFAULTS.pollInterval));
    for (;;) {
      const done = this.judge(await this.poll());
      if (done) return done;
      if (Date.now() >= deadline) {
        return this.finish(
          'still_pending',
          `campaign ${id} was still ${this.state.serviceStatus ?? 'not readable'} after following it for ${o.followFor ?? CAMPAIGN_DEFAULTS.followFor}; follow it again later (cli: sms campaigns follow --id ${id})`,
        );
      }
      await sleep(Math.max(1, Math.min(wait, deadline - Date.now())));
      wait = Math.min(wait * 2, maxWait);
    }
  }

  // --- helpers ---

  /** A durable wait until `scheduledAt`, checking every `scheduledCheckEvery` that the campaign is still listed. */
  private async waitForSendTime(scheduledAt: number): Promise<SmsCampaignResult | undefined> {
    this.state.scheduledFor = new Date(scheduledAt).toISOString();
    this.setStatus('scheduled');
    const every = this.options.scheduledCheckEvery ?? CAMPAIGN_DEFAULTS.scheduledCheckEvery;
    const checkEvery = Math.max(1, smsDurationMs(every));
    while (Date.now() < scheduledAt) {
      await sleep(Math.max(1, Math.min(scheduledAt - Date.now(), checkEvery)));
      if (Date.now() < scheduledAt) {
        const done = this.judge(await this.poll());
        if (done) return done;
      }
    }
    return undefined;
  }

  /** One campaign list (G3) read of the campaign ('error' when the service could not answer). */
  private async poll(): Promise<SmsCampaignLookup | 'error'> {
    this.state.polls += 1;
    const at = new Date(Date.now()).toISOString();
    this.state.lastPolledAt = at;
    try {
      const r = await this.reads.smsFindCampaign({
        id: this.state.campaignId!,
        ...(this.state.name ? { name: this.state.name } : {}),
        pageSize: this.pageSize,
      });
      this.record({ op: 'poll', outcome: r.found ? r.status : 'not_listed', at });
      if (r.found) this.state.serviceStatus = r.status;
      return r;
    } catch (err) {
      if (isCancellation(err)) throw err;
      this.record({ op: 'poll', outcome: 'error', at, detail: `${failureLabel(err)}: ${failureMessage(err)}` });
      return 'error';
    }
  }

  /** The flow's end when a read settles it: success, failed, or not listed `missingReads` times in a row. */
  private judge(r: SmsCampaignLookup | 'error'): SmsCampaignResult | undefined {
    const id = this.state.campaignId!;
    if (r === 'error') return undefined;
    if (!r.found) {
      this.misses += 1;
      return this.misses >= (this.options.missingReads ?? CAMPAIGN_DEFAULTS.missingReads)
        ? this.finish(
            'not_found',
            `the campaign list (G3) did not list campaign ${id} (under success, failed or pending) in ${this.misses} consecutive reads: it was deleted or is not visible`,
          )
        : undefined;
    }
    this.misses = 0;
    if (r.status === 'success')
      return this.finish('success', `campaign ${id} was sent: the campaign list (G3) shows it as success`);
    if (r.status === 'failed')
      return this.finish('failed', `campaign ${id} failed: the campaign list (G3) shows it as failed`);
    return undefined;
  }

  /** The flow's first attributes: its kind, its reference and its first status. */
  private showStart(): void {
    upsertSearchAttributes(
      paymentSearchAttributes({ flow: 'sms-campaign', reference: this.reference, status: this.state.status }),
    );
  }

  private record(step: SmsCampaignStep): void {
    this.state.steps.push(step);
    if (step.op === 'poll') {
      const polls = this.state.steps.filter((x) => x.op === 'poll');
      if (polls.length > POLL_STEPS_KEPT) this.state.steps.splice(this.state.steps.indexOf(polls[0]), 1);
    }
  }

  private finish(status: SmsCampaignResult['status'], message: string): SmsCampaignResult {
    this.setStatus(status);
    return { ...stateCopy(this.state), status, message, ...(this.campaign ? { campaign: this.campaign } : {}) };
  }

  private setStatus(status: SmsCampaignState['status']): void {
    this.state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  }
}
