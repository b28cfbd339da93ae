// SMS (G1-G3) workflows. See src/shared/sms.ts for the inputs and results, docs/flows-sms.md for
// the choices.
//
// smsSendWorkflow — G1 instant send of a list:
//   1. input rules (zod, shared with the starter); each message checked on its own: a bad one is
//      `invalid` (field and rule named), an exact repeat `duplicate`; the others go on
//   2. batches of at most `batchSize` (default 100), never the same number twice in one batch
//   3. each batch sent ONCE (activity maximumAttempts 1). The spec gives G1 no reference and no
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
// smsCampaignWorkflow — G2 create once, then follow (G3):
//   - before G2, G3 lists the ids already carrying the name; G2 is sent once (a provable "never
//     left" may be resent). A lost answer is searched for in G3 by name: exactly one new id is the
//     campaign; none or several end `outcome_unknown` — it is never created again.
//   - scheduled: a durable timer until `sscheduled_dor` (checking every `scheduledCheckEvery` that
//     the campaign is still listed), then G3 polls on a doubling backoff until success or failed,
//     `not_found` after `missingReads` reads without it, `still_pending` after `followFor`.
//   - cancel: a G2 in flight is let finish (the result names the campaign, `still_pending`, or
//     `outcome_unknown` if its answer was lost); a cancel while following cancels the workflow
//     (the campaign itself goes on; follow it again by uuid).
//
// smsCampaignFollowWorkflow — the follow part alone, for a campaign known by uuid.
import type { RetryPolicy } from '@temporalio/common';
import {
  ApplicationFailure,
  CancellationScope,
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
  type SmsCampaignFollowInput,
  type SmsCampaignInput,
  type SmsCampaignLookup,
  type SmsCampaignOptions,
  type SmsCampaignRecord,
  type SmsCampaignResult,
  type SmsCampaignState,
  type SmsCampaignStep,
  type SmsNumberResult,
  type SmsSendInput,
  type SmsSendResult,
  type SmsSendState,
} from '../shared/sms';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { lostByHeartbeat } from './steps/unknown-outcome';
import {
  FailureTypes,
  activityFailureMessage,
  activityFailureType,
  describeIssues,
  issuesOf,
  type FieldIssue,
} from '../shared/failures';

/** Margin over the HTTP timeout for a send's start-to-close: no attempt can outlive its call. */
const IN_FLIGHT_MARGIN_MS = 15_000;
/** A worker lost mid-call is noticed this quickly (the activity heartbeats while the call is open). */
const SEND_HEARTBEAT_TIMEOUT = '10s';
const REFUSED: readonly string[] = [FailureTypes.BadRequest, FailureTypes.InvalidRequest, FailureTypes.NotFound];
const READ_RETRY: RetryPolicy = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '30s',
  nonRetryableErrorTypes: [...REFUSED, FailureTypes.Unauthorized, FailureTypes.ServiceError],
};

function invalidInput(what: string, issues: FieldIssue[]): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'InvalidInput',
    message: `invalid ${what}: ${describeIssues(issues)}`,
    nonRetryable: true,
    details: [issues],
  });
}

/** The failure's type for the records: the activity's deliberate type, or how the attempt was lost. */
function failureLabel(err: unknown): string {
  return activityFailureType(err) ?? (lostByHeartbeat(err) ? 'HeartbeatTimeout' : 'ActivityFailure');
}

// ---- G1 ------------------------------------------------------------------------------------------

const SEND_DEFAULTS = { sendTimeoutMs: 30_000, notSentRetries: 2, retryBackoff: '2s' } as const;

export async function smsSendWorkflow(raw: SmsSendInput): Promise<SmsSendResult> {
  const parsed = SmsSendInputSchema.safeParse(raw);
  if (!parsed.success) throw invalidInput('SMS send', issuesOf(parsed.error));
  const { options = {}, ...input } = parsed.data;
  const checked = checkSmsMessages(input.messages);
  if (options.invalidMessages === 'refuse' && checked.issues.length > 0) throw invalidInput('SMS send', checked.issues);
  const batchSize = options.batchSize ?? SMS_DEFAULT_BATCH_SIZE;
  const timeoutMs = options.sendTimeoutMs ?? SEND_DEFAULTS.sendTimeoutMs;
  const notSentRetries = options.notSentRetries ?? SEND_DEFAULTS.notSentRetries;
  const planned = planSmsBatches(checked.valid, batchSize);

  const { smsSendBatch } = proxyActivities<SmsActivities>({
    startToCloseTimeout: timeoutMs + IN_FLIGHT_MARGIN_MS,
    heartbeatTimeout: SEND_HEARTBEAT_TIMEOUT,
    retry: { maximumAttempts: 1 },
  });

  const numbers = new Map<number, SmsNumberResult>();
  for (const r of checked.rejected) numbers.set(r.index, r);
  const state: SmsSendState = {
    reference: input.reference,
    status: 'validating',
    batchSize,
    batches: planned.map((b, i) => ({ batch: i + 1, size: b.length, attempts: 0, outcome: 'waiting' })),
    counts: { ...countSmsResults([]), total: input.messages.length },
    costByCurrency: {},
  };
  const refreshCounts = () => {
    state.counts = { ...countSmsResults([...numbers.values()]), total: input.messages.length };
  };
  refreshCounts();
  setHandler(smsSendStateQuery, () => ({
    ...state,
    batches: state.batches.map((b) => ({ ...b })),
    counts: { ...state.counts },
    costByCurrency: { ...state.costByCurrency },
  }));
  const setStatus = (status: SmsSendState['status']) => {
    state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  upsertSearchAttributes(
    paymentSearchAttributes({ flow: 'sms-send', reference: input.reference, status: 'validating' }),
  );
  setStatus('sending');

  /** Why the later batches are not sent (the key was refused, or the send was cancelled). */
  let stopReason: string | undefined;
  // A cancel stops the batches not yet sent; a batch in flight is let finish (its answer is recorded).
  const root = CancellationScope.current();
  void root.cancelRequested.catch(() => {
    state.cancelRequested = true;
  });
  const settleBatch = (i: number, status: SmsNumberResult['status'], error: string) => {
    for (const e of planned[i])
      numbers.set(e.index, { index: e.index, phone_number: e.phone_number, status, batch: i + 1, error });
  };

  for (let i = 0; i < planned.length; i++) {
    const batch = i + 1;
    const rec = state.batches[i];
    if (stopReason === undefined && root.consideredCancelled) stopReason = 'not sent: the send was cancelled';
    if (stopReason !== undefined) {
      rec.outcome = 'skipped';
      rec.detail = stopReason;
      settleBatch(i, 'not_sent', stopReason);
      refreshCounts();
      continue;
    }
    const request = {
      sender_id: input.sender_id,
      messages: planned[i].map((e) => ({ phone_number: e.phone_number, message: e.message })),
    };
    for (;;) {
      rec.attempts += 1;
      rec.outcome = 'sending';
      try {
        // Not cancellable: a cancel must not turn a batch the service may be sending into an unknown.
        const answer = await CancellationScope.nonCancellable(() =>
          smsSendBatch(request, { batch, attempt: rec.attempts, timeoutMs }),
        );
        const matched = matchSmsBatch(batch, planned[i], answer);
        for (const r of matched.results) numbers.set(r.index, r);
        rec.outcome = 'answered';
        if (answer.batch_id) rec.batch_id = answer.batch_id;
        const costs = matched.results.flatMap((r) => (r.cost !== undefined ? [r.cost] : []));
        const total = answer.total_cost ?? (costs.length > 0 ? costs.reduce(addDecimals, '0') : undefined);
        const currency = answer.currency ?? 'unknown';
        if (total !== undefined) {
          rec.total_cost = total;
          rec.currency = currency;
          state.costByCurrency[currency] = addDecimals(state.costByCurrency[currency] ?? '0', total);
        }
        if (matched.unmatchedErrors.length > 0) rec.unmatched_errors = matched.unmatchedErrors;
        if (matched.unmatchedSent > 0) rec.unmatched_sent = matched.unmatchedSent;
        if (answer.message) rec.detail = answer.message;
        break;
      } catch (err) {
        const type = failureLabel(err);
        const message = activityFailureMessage(err);
        rec.detail = `${type}: ${message}`;
        if (type === FailureTypes.Transient) {
          // The request never left: the only case a batch is sent again.
          if (rec.attempts <= notSentRetries) {
            try {
              await sleep(smsDurationMs(options.retryBackoff ?? SEND_DEFAULTS.retryBackoff));
              continue;
            } catch (e) {
              if (!isCancellation(e)) throw e;
              stopReason = 'not sent: the send was cancelled';
            }
          }
          rec.outcome = 'not_sent';
          settleBatch(
            i,
            'not_sent',
            `batch ${batch} never reached the service (${message}) after ${rec.attempts} attempt(s)`,
          );
        } else if (REFUSED.includes(type) || type === FailureTypes.Unauthorized) {
          rec.outcome = 'refused';
          settleBatch(i, 'failed', `the service refused batch ${batch}: ${message}; nothing in it was sent`);
          if (type === FailureTypes.Unauthorized)
            stopReason = `not sent: the service refused the key on batch ${batch} (${message})`;
        } else {
          rec.outcome = 'outcome_unknown';
          settleBatch(
            i,
            'outcome_unknown',
            `the answer to batch ${batch} was lost (${type}: ${message}): it may have been sent; not resent`,
          );
        }
        break;
      }
    }
    refreshCounts();
  }

  const list = input.messages.map((_, index) => numbers.get(index)!);
  const counts = countSmsResults(list);
  const status = smsSendOverallStatus(counts);
  const currencies = Object.keys(state.costByCurrency);
  const costText = currencies.map((c) => `${state.costByCurrency[c]} ${c}`).join(' + ');
  const parts = [
    `sent ${counts.sent} of ${counts.total}`,
    ...(['failed', 'invalid', 'duplicate', 'not_sent', 'outcome_unknown'] as const)
      .filter((k) => counts[k] > 0)
      .map((k) => `${counts[k]} ${k}`),
  ];
  setStatus(status);
  state.counts = counts;
  return {
    ...state,
    batches: state.batches.map((b) => ({ ...b })),
    status,
    message: `${parts.join(', ')}${costText ? `; cost ${costText}` : ''}${counts.outcome_unknown > 0 ? ' (outcome_unknown numbers may have been sent and are never resent automatically)' : ''}`,
    numbers: list,
    ...(currencies.length === 1 ? { totalCost: state.costByCurrency[currencies[0]], currency: currencies[0] } : {}),
  };
}

// ---- G2/G3 -----------------------------------------------------------------------------------

const CAMPAIGN_DEFAULTS = {
  pollInterval: '30s',
  maxPollInterval: '5 minutes',
  followFor: '24 hours',
  scheduledCheckEvery: '6 hours',
  missingReads: 3,
  lostCreateReads: 3,
  lostCreateSettle: '5s',
  createTimeoutMs: 30_000,
  pageSize: 100,
  notSentRetries: 2,
  retryBackoff: '2s',
} as const;
/** Poll steps kept in the state (older ones are only counted). */
const POLL_STEPS_KEPT = 20;

type Options = NonNullable<SmsCampaignOptions>;

function readActivities() {
  return proxyActivities<SmsActivities>({
    startToCloseTimeout: '2 minutes',
    scheduleToCloseTimeout: '5 minutes',
    retry: READ_RETRY,
  });
}

/** State, query, search attributes and `finish` for both campaign workflows. */
function campaignRun(init: Omit<SmsCampaignState, 'polls' | 'steps'>, sa: { reference: string }) {
  const state: SmsCampaignState = { ...init, polls: 0, steps: [] };
  setHandler(smsCampaignStateQuery, () => ({ ...state, steps: [...state.steps] }));
  void CancellationScope.current().cancelRequested.catch(() => {
    state.cancelRequested = true;
  });
  const setStatus = (status: SmsCampaignState['status']) => {
    state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  upsertSearchAttributes(
    paymentSearchAttributes({ flow: 'sms-campaign', reference: sa.reference, status: state.status }),
  );
  const record = (s: SmsCampaignStep) => {
    state.steps.push(s);
    if (s.op === 'poll') {
      const polls = state.steps.filter((x) => x.op === 'poll');
      if (polls.length > POLL_STEPS_KEPT) state.steps.splice(state.steps.indexOf(polls[0]), 1);
    }
  };
  let campaign: SmsCampaignRecord | undefined;
  const finish = (status: SmsCampaignResult['status'], message: string): SmsCampaignResult => {
    setStatus(status);
    return { ...state, steps: [...state.steps], status, message, ...(campaign ? { campaign } : {}) };
  };
  return { state, setStatus, record, finish, setCampaign: (c: SmsCampaignRecord) => (campaign = c) };
}

/** Waits for the send time (durably), then reads G3 until success, failed, not listed, or followFor. */
async function followCampaign(
  run: ReturnType<typeof campaignRun>,
  o: Options,
  scheduledAt: number | undefined,
): Promise<SmsCampaignResult> {
  const { state, setStatus, record, finish } = run;
  const id = state.campaignId!;
  const { smsFindCampaign } = readActivities();
  const missingReads = o.missingReads ?? CAMPAIGN_DEFAULTS.missingReads;
  let misses = 0;

  const poll = async (): Promise<SmsCampaignLookup | 'error'> => {
    state.polls += 1;
    const at = new Date(Date.now()).toISOString();
    state.lastPolledAt = at;
    try {
      const r = await smsFindCampaign({
        id,
        ...(state.name ? { name: state.name } : {}),
        pageSize: o.pageSize ?? CAMPAIGN_DEFAULTS.pageSize,
      });
      record({ op: 'poll', outcome: r.found ? r.status : 'not_listed', at });
      if (r.found) state.serviceStatus = r.status;
      return r;
    } catch (err) {
      if (isCancellation(err)) throw err;
      record({ op: 'poll', outcome: 'error', at, detail: `${failureLabel(err)}: ${activityFailureMessage(err)}` });
      return 'error';
    }
  };
  const judge = (r: SmsCampaignLookup | 'error'): SmsCampaignResult | undefined => {
    if (r === 'error') return undefined;
    if (!r.found) {
      misses += 1;
      return misses >= missingReads
        ? finish(
            'not_found',
            `G3 did not list campaign ${id} (under success, failed or pending) in ${misses} consecutive reads: it was deleted or is not visible`,
          )
        : undefined;
    }
    misses = 0;
    if (r.status === 'success') return finish('success', `campaign ${id} was sent (G3 lists it as success)`);
    if (r.status === 'failed') return finish('failed', `campaign ${id} failed (G3 lists it as failed)`);
    return undefined;
  };

  if (scheduledAt !== undefined && scheduledAt > Date.now()) {
    state.scheduledFor = new Date(scheduledAt).toISOString();
    setStatus('scheduled');
    const checkEvery = Math.max(1, smsDurationMs(o.scheduledCheckEvery ?? CAMPAIGN_DEFAULTS.scheduledCheckEvery));
    while (Date.now() < scheduledAt) {
      await sleep(Math.max(1, Math.min(scheduledAt - Date.now(), checkEvery)));
      if (Date.now() < scheduledAt) {
        const done = judge(await poll());
        if (done) return done;
      }
    }
  }
  setStatus('following');
  const followFor = smsDurationMs(o.followFor ?? CAMPAIGN_DEFAULTS.followFor);
  const maxWait = Math.max(1, smsDurationMs(o.maxPollInterval ?? CAMPAIGN_DEFAULTS.maxPollInterval));
  const deadline = Date.now() + followFor;
  let wait = Math.max(1, smsDurationMs(o.pollInterval ?? CAMPAIGN_DEFAULTS.pollInterval));
  for (;;) {
    const done = judge(await poll());
    if (done) return done;
    if (Date.now() >= deadline) {
      return finish(
        'still_pending',
        `campaign ${id} was still ${state.serviceStatus ?? 'not readable'} after following it for ${o.followFor ?? CAMPAIGN_DEFAULTS.followFor}; follow it again later (cli: sms campaigns follow --id ${id})`,
      );
    }
    await sleep(Math.max(1, Math.min(wait, deadline - Date.now())));
    wait = Math.min(wait * 2, maxWait);
  }
}

export async function smsCampaignWorkflow(raw: SmsCampaignInput): Promise<SmsCampaignResult> {
  const parsed = SmsCampaignInputSchema.safeParse(raw);
  if (!parsed.success) throw invalidInput('SMS campaign', issuesOf(parsed.error));
  const { reference, campaign, options: o = {} } = parsed.data;
  const run = campaignRun({ reference, name: campaign.name, status: 'validating' }, { reference });
  const { state, setStatus, record, finish } = run;
  const pageSize = o.pageSize ?? CAMPAIGN_DEFAULTS.pageSize;
  const createTimeoutMs = o.createTimeoutMs ?? CAMPAIGN_DEFAULTS.createTimeoutMs;
  const { smsListCampaignIdsByName } = readActivities();
  const { smsCreateCampaign } = proxyActivities<SmsActivities>({
    startToCloseTimeout: createTimeoutMs + IN_FLIGHT_MARGIN_MS,
    heartbeatTimeout: SEND_HEARTBEAT_TIMEOUT,
    retry: { maximumAttempts: 1 },
  });
  // Sent under the spec's own field names; an unscheduled campaign without a time gets the creation time.
  const body = { ...campaign, sscheduled_dor: campaign.sscheduled_dor ?? new Date(Date.now()).toISOString() };

  setStatus('creating');
  // The ids already carrying this name: a lost G2 answer is recognised as the one new id.
  let before: string[];
  try {
    before = await smsListCampaignIdsByName({ name: campaign.name, pageSize });
  } catch (err) {
    if (isCancellation(err)) throw err;
    return finish(
      'rejected',
      `G3 could not be read before the create (${activityFailureMessage(err)}); nothing was created`,
    );
  }

  let created: SmsCampaignRecord | undefined;
  let lost = '';
  for (let attempt = 1; ; attempt++) {
    try {
      // Not cancellable: a cancel lets G2 finish, so its answer is known.
      created = await CancellationScope.nonCancellable(() =>
        smsCreateCampaign(body, { attempt, timeoutMs: createTimeoutMs }),
      );
      record({ op: 'create', attempt, outcome: 'created', detail: created.status });
      break;
    } catch (err) {
      const type = failureLabel(err);
      const message = activityFailureMessage(err);
      if (type === FailureTypes.Transient) {
        record({ op: 'create', attempt, outcome: 'not_sent', detail: message });
        if (attempt <= (o.notSentRetries ?? CAMPAIGN_DEFAULTS.notSentRetries)) {
          await sleep(smsDurationMs(o.retryBackoff ?? CAMPAIGN_DEFAULTS.retryBackoff));
          continue;
        }
        return finish(
          'rejected',
          `G2 never reached the service (${message}) after ${attempt} attempt(s); nothing was created`,
        );
      }
      if (REFUSED.includes(type) || type === FailureTypes.Unauthorized) {
        record({ op: 'create', attempt, outcome: 'refused', detail: message });
        return finish('rejected', `the service refused the campaign: ${message}; nothing was created`);
      }
      record({ op: 'create', attempt, outcome: 'unknown', detail: `${type}: ${message}` });
      lost = `${type}: ${message}`;
      break;
    }
  }

  if (created) {
    run.setCampaign(created);
    state.campaignId = created.uuid.toLowerCase();
  }
  if (CancellationScope.current().consideredCancelled) {
    return created
      ? finish(
          'still_pending',
          `cancelled after campaign ${state.campaignId} was created (${created.status ?? 'status not given'}); it is not followed (cli: sms campaigns follow --id ${state.campaignId})`,
        )
      : finish(
          'outcome_unknown',
          `cancelled after G2's answer was lost (${lost}): campaign "${campaign.name}" may exist (look for it in G3 by name); it is not created again`,
        );
  }
  if (!created) {
    // G2's answer was lost: it is never sent again; G3 by name tells whether it landed.
    setStatus('searching');
    const reads = o.lostCreateReads ?? CAMPAIGN_DEFAULTS.lostCreateReads;
    for (let read = 1; read <= reads && state.campaignId === undefined; read++) {
      await sleep(Math.max(1, smsDurationMs(o.lostCreateSettle ?? CAMPAIGN_DEFAULTS.lostCreateSettle)));
      let ids: string[];
      try {
        ids = await smsListCampaignIdsByName({ name: campaign.name, pageSize });
      } catch (err) {
        if (isCancellation(err)) throw err;
        record({ op: 'search', read, outcome: 'error', detail: activityFailureMessage(err) });
        continue;
      }
      const fresh = ids.filter((id) => !before.includes(id));
      if (fresh.length > 1) {
        record({ op: 'search', read, outcome: 'ambiguous', detail: fresh.join(', ') });
        return finish(
          'outcome_unknown',
          `G2's answer was lost (${lost}) and G3 lists ${fresh.length} new campaigns named "${campaign.name}" (${fresh.join(', ')}); check which is this one; nothing is created again`,
        );
      }
      if (fresh.length === 1) {
        record({ op: 'search', read, outcome: 'found', detail: fresh[0] });
        state.campaignId = fresh[0];
      } else record({ op: 'search', read, outcome: 'not_found' });
    }
    if (state.campaignId === undefined) {
      return finish(
        'outcome_unknown',
        `G2's answer was lost (${lost}) and G3 did not list a new campaign named "${campaign.name}" in ${reads} read(s): it may not exist or not be listed yet; it is NOT created again (follow it by uuid once known, or create it under a new reference)`,
      );
    }
  }
  return followCampaign(
    run,
    o,
    campaign.is_scheduled && campaign.sscheduled_dor !== undefined ? Date.parse(campaign.sscheduled_dor) : undefined,
  );
}

export async function smsCampaignFollowWorkflow(raw: SmsCampaignFollowInput): Promise<SmsCampaignResult> {
  const parsed = SmsCampaignFollowInputSchema.safeParse(raw);
  if (!parsed.success) throw invalidInput('SMS campaign follow', issuesOf(parsed.error));
  const { campaign_id, name, scheduled_for, options: o = {} } = parsed.data;
  const id = campaign_id.toLowerCase();
  const run = campaignRun({ campaignId: id, ...(name ? { name } : {}), status: 'following' }, { reference: id });
  return followCampaign(run, o, scheduled_for !== undefined ? Date.parse(scheduled_for) : undefined);
}
