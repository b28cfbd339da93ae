// The POS pre-authorisation workflow on the time-skipping server with scripted F3/F4 activities:
// hold, then one completion tied to the pre-authorisation (sent once; resent only after an F4
// 404), a second completion refused, release, and the lapse at the end of a 7-day window (the
// time-skipping server jumps the durable timer).
import { randomUUID } from 'node:crypto';
import type { Duration } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { type PosSealedCard } from '../../src/shared/pos-terminal';
import { resolveOutcomeUpdate } from '../../src/shared/outcome';
import {
  completePreAuthUpdate,
  completionMerchantRef,
  posPreAuthStateQuery,
  releasePreAuthUpdate,
  type PosPreAuthStatus,
  type PosSealedPreAuthInput,
} from '../../src/shared/pos-preauth';
import type { posPreAuthWorkflow } from '../../src/workflows/pos-preauth';
import { SECRET_UNAVAILABLE } from '../../src/shared/claim-check';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { TerminalScript } from './terminal-script';
import { assertNoRetryWithoutRequery, preAuthReaches, sealedCardInput } from './helpers';
import { FailureTypes } from '../../src/shared/failures';
import type { MerchantEvent } from '../../src/shared/merchant-event';
import type { MerchantEventDeliveryActivities } from '../../src/activities/merchant-event-delivery';
import { eventually } from '../support/polling';
import { workflowBundle } from '../support/stack';
import { createWorkerGroup } from '../../src/workers/worker-group';

const { UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED: ADMITTED } =
  temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage;
const script = new TerminalScript();
/** The merchant events the flows with a `notify` target handed over (their local activity), in order. */
const handedOver: MerchantEvent[] = [];
/** While set, the hand-over of an event of this type waits until the test lets it go. */
let heldBack: { type: string; letGo: Promise<void> } | undefined;
const emitMerchantEvent: MerchantEventDeliveryActivities['emitMerchantEvent'] = async ({ event }) => {
  handedOver.push(event);
  if (heldBack?.type === event.type) await heldBack.letGo;
  return 'started';
};
const taskQueue = `pos-preauth-ts-${randomUUID()}`;
const env = useTimeSkippingEnv({
  quietRuntime: true,
  worker: { taskQueue, activities: () => ({ ...script.activities(), emitMerchantEvent }) },
});
const NOTIFY = { url: 'https://merchant.example/events' } as const;
/** The types and statuses of the events one pre-authorisation handed over. */
const eventsOf = (ref: string) =>
  handedOver.filter((e) => e.data.reference === ref).map((e) => `${e.type} ${e.data.status}`);
afterEach(() => expect(script.leftovers()).toEqual({}));

const uid = () => `P${randomUUID().replace(/-/g, '').slice(0, 16)}`;
const FAST = { requerySettleDelay: '10ms', retryBackoff: '10ms' } as const;
const sameCard = (handle = `cc_${'B'.repeat(22)}`): PosSealedCard => ({ handle, bin: '539983', last4: '0008' });

function preAuthInput(ref: string, over: Partial<PosSealedPreAuthInput> = {}): PosSealedPreAuthInput {
  const { transaction_type: _t, ...rest } = sealedCardInput(ref);
  void _t;
  return { ...rest, options: FAST, ...over };
}

async function start(ref: string, over: Partial<PosSealedPreAuthInput> = {}, workflowTaskTimeout?: Duration) {
  const h = await env.client.workflow.start<typeof posPreAuthWorkflow>('posPreAuthWorkflow', {
    workflowId: `pos-preauth-${ref}`,
    taskQueue,
    args: [preAuthInput(ref, over)],
    ...(workflowTaskTimeout ? { workflowTaskTimeout } : {}),
  });
  const waitFor = (status: PosPreAuthStatus) => preAuthReaches(h, status);
  const complete = (amount: number, card: PosSealedCard = sameCard()) =>
    h.executeUpdate(completePreAuthUpdate, { args: [{ amount, card, aid: '4F07A0000000041010' }] });
  return { h, waitFor, complete };
}
/** Held, then a completion whose answer is lost while F4 cannot answer: parked outcome_unknown (F4 left scripted). */
async function heldThenCompletionParked(over: Partial<PosSealedPreAuthInput> = {}) {
  const ref = uid();
  const cp = completionMerchantRef(ref);
  script.on(ref, [{ code: '00' }]).on(
    cp,
    [{ fail: FailureTypes.OutcomeUnknown }],
    Array.from({ length: 4 }, () => ({ fail: FailureTypes.Unauthorized })),
  );
  const started = await start(ref, { options: { ...FAST, requeryBackoff: '1 hour' }, ...over });
  await started.waitFor('held');
  await started.complete(100_000);
  const parked = await started.waitFor('outcome_unknown');
  return { ...started, ref, cp, parked };
}
/** The Update has reached the server (admitted: it waits for a workflow task). */
const admitted = (workflowId: string, updateId: string) =>
  env.client.workflowService
    .pollWorkflowExecutionUpdate({
      namespace: env.namespace ?? 'default',
      updateRef: { workflowExecution: { workflowId }, updateId },
      identity: 'pos-preauth-test',
      waitPolicy: {}, // answers at once with the stage reached (NOT_FOUND before the server has it)
    })
    .then(
      (r) => r.stage === ADMITTED,
      () => false,
    );
/** A worker of the flows and the script on `queue`, without a cache (no sticky queue: the next worker there gets the next task). */
const workerOn = async (queue: string) =>
  createWorkerGroup({
    connection: env.nativeConnection,
    taskQueue: queue,
    workflowBundle: await workflowBundle(),
    activities: { ...script.activities(), emitMerchantEvent },
    maxCachedWorkflows: 0,
  });
const refused = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: { cause?: Error; message: string }) => e.cause?.message ?? e.message,
  );

describe('POS pre-authorisation: hold, then complete once', () => {
  it('approved → held; completePreAuth → F3 Completion tied to it with its own deterministic merchant_ref → completed', async () => {
    const ref = uid();
    const cp = completionMerchantRef(ref);
    script.on(ref, [{ code: '00' }]).on(cp, [{ code: '00' }]);
    const { h, waitFor, complete } = await start(ref);
    const held = await waitFor('held');
    expect(held).toMatchObject({
      amount: 150_000,
      phase: 'preauth',
      attempt: 1,
      card: { maskedPan: '539983******0008' },
    });
    expect(Date.parse(held.holdUntil!) - Date.parse(held.heldSince!)).toBe(7 * 24 * 3600 * 1000); // default window
    expect((await h.describe()).searchAttributes.PaymentStatus).toEqual(['held']);
    expect(await complete(120_000)).toMatchObject({ completionMerchantRef: cp, amount: 120_000 });
    const result = await h.result();
    expect(result).toMatchObject({
      status: 'completed',
      amount: 150_000,
      completion: {
        merchantRef: cp,
        amount: 120_000,
        status: 'approved',
        attempt: 1,
        transaction: { response_code: '00' },
      },
      action: `Completed: 120000 of the 150000 held was captured (completion ${cp})`,
    });
    expect(cp).toMatch(/^CP[0-9a-z]{13}$/);
    expect(script.sent.find((r) => r.merchant_ref === ref)).toMatchObject({ transaction_type: 'Pre-Authorization' });
    expect(script.sent.find((r) => r.merchant_ref === ref)).not.toHaveProperty('original_merchant_ref');
    expect(script.sent.find((r) => r.merchant_ref === cp)).toMatchObject({
      transaction_type: 'Completion',
      original_merchant_ref: ref,
      amount: '120000',
      currency: 'NGN',
      account_type: 'DEFAULT',
      card: sameCard(),
    });
    expect(script.opsOf(cp)).toEqual(['initiate']);
  });

  it('a completion whose answer is lost: F4 finds it, never sent again', async () => {
    const ref = uid();
    const cp = completionMerchantRef(ref);
    script
      .on(ref, [{ code: '00' }])
      .on(cp, [{ fail: FailureTypes.OutcomeUnknown }], [{ code: '00', type: 'Completion' }]);
    const { h, waitFor, complete } = await start(ref);
    await waitFor('held');
    await complete(150_000);
    expect(await h.result()).toMatchObject({ status: 'completed', completion: { attempt: 1 } });
    expect(script.opsOf(cp)).toEqual(['initiate', 'requery:found']);
  });

  it('a completion lost and F4 404: resent once, same merchant_ref and request', async () => {
    const ref = uid();
    const cp = completionMerchantRef(ref);
    script.on(ref, [{ code: '00' }]).on(cp, [{ fail: FailureTypes.OutcomeUnknown }, { code: '00' }], ['not_found']);
    const { h, waitFor, complete } = await start(ref);
    await waitFor('held');
    await complete(1_000);
    expect(await h.result()).toMatchObject({ status: 'completed', completion: { attempt: 2 } });
    expect(script.opsOf(cp)).toEqual(['initiate', 'requery:not_found', 'initiate']);
    const sent = script.sent.filter((r) => r.merchant_ref === cp);
    expect(sent[1]).toEqual(sent[0]);
    assertNoRetryWithoutRequery(script.calls);
  });

  it('a second completePreAuth is refused with a clear error while the first is parked outcome_unknown; resolveOutcome ends it', async () => {
    const { h, complete, cp, parked } = await heldThenCompletionParked();
    expect(parked).toMatchObject({ phase: 'completion', completion: { status: 'outcome_unknown', merchantRef: cp } });
    expect(await refused(complete(100_000))).toMatch(
      /completePreAuth refused: .*already being completed or was completed.*a completion is sent once/,
    );
    expect(await refused(h.executeUpdate(releasePreAuthUpdate, { args: [{}] }))).toMatch(/releasePreAuth refused/);
    await h.executeUpdate(resolveOutcomeUpdate, {
      args: [{ outcome: 'approved', reason: 'acquirer capture file', operator: 'ops-2' }],
    });
    expect(await h.result()).toMatchObject({
      status: 'completed',
      completion: { resolution: { outcome: 'approved', operator: 'ops-2' } },
    });
    expect(script.opsOf(cp).filter((o) => o === 'initiate')).toHaveLength(1);
    script.f4.set(cp, []);
  });

  it('a parked completion tells the merchant it needs attention (its own event, the completion named), then its outcome', async () => {
    const { h, ref, cp } = await heldThenCompletionParked({ notify: NOTIFY });
    await h.executeUpdate(resolveOutcomeUpdate, {
      args: [{ outcome: 'approved', reason: 'acquirer capture file', operator: 'ops-2' }],
    });
    expect(await h.result()).toMatchObject({ status: 'completed' });
    expect(eventsOf(ref)).toEqual([
      'pos.preauth.succeeded held',
      'pos.completion.needs_attention outcome_unknown',
      'pos.completion.succeeded completed',
    ]);
    expect(
      handedOver.find((e) => e.data.reference === ref && e.type === 'pos.completion.needs_attention'),
    ).toMatchObject({ data: { part: cp, amount: 100_000, currency: 'NGN' } });
    script.f4.set(cp, []);
  });

  it('cancelled while its completion is parked: F4 asked once more, outcome_unknown with cancelRequested, never resent', async () => {
    const { h, cp } = await heldThenCompletionParked();
    const readsBefore = script.opsOf(cp).filter((o) => o.startsWith('requery')).length;
    await h.cancel();
    const result = await h.result();
    expect(result).toMatchObject({ status: 'outcome_unknown', cancelRequested: true });
    expect(result.action).toMatch(/NOT sent again/);
    expect(script.opsOf(cp).filter((o) => o.startsWith('requery'))).toHaveLength(readsBefore + 1);
    expect(script.opsOf(cp).filter((o) => o === 'initiate')).toHaveLength(1);
    script.f4.set(cp, []);
  });

  it('two completions in one workflow task (both sent while no worker ran): the first goes on, the validator refuses the second', async () => {
    const ref = uid();
    const cp = completionMerchantRef(ref);
    script.on(ref, [{ code: '00' }]).on(cp, [{ code: '00' }]);
    const queue = `pos-preauth-one-task-${randomUUID()}`;
    const worker = () => workerOn(queue);
    const h = await (
      await worker()
    ).runUntil(async () => {
      const h = await env.client.workflow.start<typeof posPreAuthWorkflow>('posPreAuthWorkflow', {
        workflowId: `pos-preauth-${ref}`,
        taskQueue: queue,
        args: [preAuthInput(ref)],
      });
      await preAuthReaches(h, 'held');
      return h;
    });
    // No worker: the two Updates wait at the server (admitted), for the same workflow task.
    const send = (updateId: string, amount: number) =>
      refused(
        h.executeUpdate(completePreAuthUpdate, {
          updateId,
          args: [{ amount, card: sameCard(), aid: '4F07A0000000041010' }],
        }),
      );
    const first = send(`${ref}-1`, 120_000);
    await eventually(() => admitted(h.workflowId, `${ref}-1`), { description: 'the first completion admitted' });
    const second = send(`${ref}-2`, 130_000);
    await eventually(() => admitted(h.workflowId, `${ref}-2`), { description: 'the second completion admitted' });
    await (
      await worker()
    ).runUntil(async () => {
      expect(await h.result()).toMatchObject({ status: 'completed', completion: { amount: 120_000 } });
    });
    expect(await first).toBe('accepted');
    expect(await second).toBe(
      `completePreAuth refused: the pre-authorisation ${ref} is already being completed (a completion was accepted just before this one); a completion is sent once`,
    );
    expect(script.sent.filter((r) => r.merchant_ref === cp)).toMatchObject([{ amount: '120000' }]);
  });

  it('refused completions: over the held amount, another card; the hold stays', async () => {
    const ref = uid();
    const cp = completionMerchantRef(ref);
    script.on(ref, [{ code: '00' }]).on(cp, [{ code: '00' }]);
    const { h, waitFor, complete } = await start(ref);
    await waitFor('held');
    expect(await refused(complete(150_001))).toMatch(/amount 150001 is more than the 150000 held/);
    expect(await refused(complete(1_000, { handle: `cc_${'C'.repeat(22)}`, bin: '539983', last4: '1111' }))).toMatch(
      /not the pre-authorised card/,
    );
    // The same last four digits on another card (its BIN differs).
    expect(await refused(complete(1_000, { handle: `cc_${'C'.repeat(22)}`, bin: '411111', last4: '0008' }))).toBe(
      'completePreAuth refused: the card presented (411111******0008) is not the pre-authorised card (539983******0008)',
    );
    expect(await refused(complete(0))).toMatch(/amount must be greater than 0/);
    expect((await h.query(posPreAuthStateQuery)).status).toBe('held');
    await h.executeUpdate(completePreAuthUpdate, {
      args: [{ amount: 150_000, card: sameCard(), aid: '4F07A0000000041010', card_type: 'Visa' }],
    });
    expect(await h.result()).toMatchObject({ status: 'completed' });
    // The completion's F3 carries the card type given with it.
    expect(script.sent.find((r) => r.merchant_ref === cp)).toMatchObject({ card_type: 'Visa' });
  });

  it("the completion's card read expired before it was sent: held again (nothing sent), a new completePreAuth completes", async () => {
    const ref = uid();
    const cp = completionMerchantRef(ref);
    script.on(ref, [{ code: '00' }]).on(cp, [{ fail: SECRET_UNAVAILABLE }, { code: '00' }]);
    const { h, waitFor, complete } = await start(ref);
    await waitFor('held');
    await complete(5_000, sameCard(`cc_${'D'.repeat(22)}`));
    const again = await waitFor('held');
    expect(again).toMatchObject({ completionsNotSent: 1, completion: { status: 'card_data_unavailable', attempt: 0 } });
    await complete(5_000, sameCard(`cc_${'E'.repeat(22)}`));
    expect(await h.result()).toMatchObject({ status: 'completed', completion: { attempt: 1, amount: 5_000 } });
    expect(script.opsOf(cp)).toEqual(['initiate']);
  });

  it('a completion after one whose card read expired, the hold released meanwhile: refused as released, not as completed', async () => {
    const ref = uid();
    const cp = completionMerchantRef(ref);
    script.on(ref, [{ code: '00' }]).on(cp, [{ fail: SECRET_UNAVAILABLE }]);
    let letGo!: () => void;
    heldBack = { type: 'pos.preauth.released', letGo: new Promise<void>((resolve) => (letGo = resolve)) };
    try {
      // A short workflow task: the Update waits for the task that runs the hand-over to end.
      const { h, waitFor, complete } = await start(ref, { notify: NOTIFY }, '2s');
      await waitFor('held');
      await complete(5_000, sameCard(`cc_${'D'.repeat(22)}`));
      expect(await waitFor('held')).toMatchObject({ completion: { status: 'card_data_unavailable' } });
      await h.executeUpdate(releasePreAuthUpdate, { args: [{}] });
      // Released, and still running while its event is handed over (held back here).
      await eventually(() => eventsOf(ref).includes('pos.preauth.released released'));
      expect(await refused(complete(5_000, sameCard(`cc_${'E'.repeat(22)}`)))).toBe(
        `completePreAuth refused: the pre-authorisation ${ref} is released, not held`,
      );
      letGo();
      expect(await h.result()).toMatchObject({ status: 'released', completion: { status: 'card_data_unavailable' } });
      expect(script.opsOf(cp)).toEqual([]);
    } finally {
      letGo();
      heldBack = undefined;
    }
  });

  it('a completion declined: completion_declined, final; nothing moved beyond the hold', async () => {
    const ref = uid();
    const cp = completionMerchantRef(ref);
    script.on(ref, [{ code: '00' }]).on(cp, [{ code: '05' }]);
    const { h, waitFor, complete } = await start(ref);
    await waitFor('held');
    await complete(5_000);
    const result = await h.result();
    expect(result).toMatchObject({ status: 'completion_declined', completion: { status: 'declined' } });
    expect(result.action).toMatch(/hold.*lapses at the issuer/);
  });
});

describe('POS pre-authorisation: a completion that does not go through', () => {
  it('refused by the service (400): completion_rejected, final, the reason given; nothing moved beyond the hold', async () => {
    const ref = uid();
    const cp = completionMerchantRef(ref);
    script.on(ref, [{ code: '00' }]).on(cp, [{ fail: FailureTypes.BadRequest }]);
    const { h, waitFor, complete } = await start(ref);
    await waitFor('held');
    await complete(5_000);
    const result = await h.result();
    expect(result).toMatchObject({ status: 'completion_rejected', completion: { status: 'rejected' } });
    expect(result.action).toMatch(
      /^Refused by the service, nothing moved: .*scripted BadRequest.*; the hold lapses at the issuer$/,
    );
    expect(script.opsOf(cp).filter((o) => o === 'initiate')).toHaveLength(1);
  });

  it('never received, every attempt after a 404: completion_not_received, final', async () => {
    const ref = uid();
    const cp = completionMerchantRef(ref);
    script.on(ref, [{ code: '00' }]).on(cp, [{ fail: FailureTypes.OutcomeUnknown }], ['not_found']);
    const { h, waitFor, complete } = await start(ref, { options: { ...FAST, maxAttempts: 1 } });
    await waitFor('held');
    await complete(5_000);
    const result = await h.result();
    expect(result).toMatchObject({ status: 'completion_not_received', completion: { status: 'not_received' } });
    expect(result.action).toMatch(
      /^The service never received the completion \(.*\); nothing moved\. The hold lapses at the issuer\.$/,
    );
    expect(script.opsOf(cp)).toEqual(['initiate', 'requery:not_found']);
  });
});

describe('POS pre-authorisation: the hold ends without a completion', () => {
  it('lapse: the 7-day window ends (durable timer, skipped) → lapsed, no completion sent; a complete after that is refused', async () => {
    const ref = uid();
    script.on(ref, [{ code: '00' }]);
    const { h, waitFor } = await start(ref);
    await waitFor('held');
    const result = await h.result(); // the time-skipping server jumps to the window's end
    expect(result).toMatchObject({ status: 'lapsed', phase: 'preauth' });
    expect(result.completion).toBeUndefined();
    expect(result.action).toMatch(/hold window ended.*nothing moved beyond the hold/);
    expect(script.calls.filter((c) => c.merchantRef === completionMerchantRef(ref))).toEqual([]);
    expect(
      await refused(
        h.executeUpdate(completePreAuthUpdate, { args: [{ amount: 1, card: sameCard(), aid: '4F07A0000000041010' }] }),
      ),
    ).not.toBe('accepted');
    expect((await h.describe()).searchAttributes.PaymentStatus).toEqual(['lapsed']);
  });

  it('a completion in the workflow task where the window ends (sent while no worker ran): refused, the window named; lapsed', async () => {
    const ref = uid();
    script.on(ref, [{ code: '00' }]);
    const queue = `pos-preauth-window-end-${randomUUID()}`;
    const worker = () => workerOn(queue);
    const { h, held } = await (
      await worker()
    ).runUntil(async () => {
      const h = await env.client.workflow.start<typeof posPreAuthWorkflow>('posPreAuthWorkflow', {
        workflowId: `pos-preauth-${ref}`,
        taskQueue: queue,
        args: [preAuthInput(ref, { options: { ...FAST, holdWindow: 5_000 } })],
      });
      return { h, held: await preAuthReaches(h, 'held') };
    });
    // No worker: the window's timer fires (5 s, in real time: nothing awaits a result), then the
    // completion is admitted; one workflow task gets both, and the validator runs first.
    await eventually(async () => (await h.fetchHistory()).events?.some((e) => e.timerFiredEventAttributes) ?? false, {
      timeoutMs: 20_000,
      description: "the window's timer fired",
    });
    const answer = refused(
      h.executeUpdate(completePreAuthUpdate, {
        updateId: `${ref}-late`,
        args: [{ amount: 1_000, card: sameCard(), aid: '4F07A0000000041010' }],
      }),
    );
    await eventually(() => admitted(h.workflowId, `${ref}-late`), { description: 'the completion admitted' });
    await (
      await worker()
    ).runUntil(async () => {
      expect(await answer).toBe(`completePreAuth refused: the hold window ended at ${held.holdUntil}`);
      expect(await h.result()).toMatchObject({ status: 'lapsed' });
    });
    expect(script.calls.filter((c) => c.merchantRef === completionMerchantRef(ref))).toEqual([]);
  });

  it('a configured window (48h): lapses after it, not before', async () => {
    const ref = uid();
    script.on(ref, [{ code: '00' }]);
    const { h, waitFor } = await start(ref, { options: { ...FAST, holdWindow: '48h' } });
    const held = await waitFor('held');
    expect(Date.parse(held.holdUntil!) - Date.parse(held.heldSince!)).toBe(48 * 3600 * 1000);
    await env.sleep(47 * 3600 * 1000);
    expect((await h.query(posPreAuthStateQuery)).status).toBe('held');
    const result = await h.result();
    expect(result.status).toBe('lapsed');
  });

  it('release: released, no completion sent', async () => {
    const ref = uid();
    script.on(ref, [{ code: '00' }]);
    const { h, waitFor } = await start(ref);
    await waitFor('held');
    await h.executeUpdate(releasePreAuthUpdate, { args: [{ reason: 'guest paid cash' }] });
    expect(await h.result()).toMatchObject({ status: 'released', releaseReason: 'guest paid cash' });
    expect(script.calls.filter((c) => c.merchantRef === completionMerchantRef(ref))).toEqual([]);
  });
});

describe('POS pre-authorisation: the pre-authorisation F3 itself', () => {
  it('declined (51): final, never held, no completion accepted', async () => {
    const ref = uid();
    script.on(ref, [{ code: '51' }]);
    const { h } = await start(ref);
    expect(await h.result()).toMatchObject({ status: 'declined', attempt: 1 });
  });

  it('lost answer → F4 finds it approved → held; lost answer → F4 404 → resent once → held', async () => {
    const a = uid();
    script.on(a, [{ fail: FailureTypes.OutcomeUnknown }], [{ code: '00', type: 'Pre-Authorization' }]);
    const first = await start(a);
    expect(await first.waitFor('held')).toMatchObject({ attempt: 1 });
    await first.h.executeUpdate(releasePreAuthUpdate, { args: [{}] });
    await first.h.result();
    expect(script.opsOf(a)).toEqual(['initiate', 'requery:found']);

    const b = uid();
    script.on(b, [{ fail: FailureTypes.OutcomeUnknown }, { code: '00' }], ['not_found']);
    const second = await start(b);
    expect(await second.waitFor('held')).toMatchObject({ attempt: 2 });
    await second.h.executeUpdate(releasePreAuthUpdate, { args: [{}] });
    await second.h.result();
    expect(script.opsOf(b)).toEqual(['initiate', 'requery:not_found', 'initiate']);
  });

  it('requery unanswerable: parked outcome_unknown, complete refused while parked, never resent', async () => {
    const ref = uid();
    script.on(
      ref,
      [{ fail: FailureTypes.OutcomeUnknown }],
      Array.from({ length: 3 }, () => ({ fail: FailureTypes.Unauthorized })),
    );
    const { h, waitFor, complete } = await start(ref, { options: { ...FAST, requeryBackoff: '1 hour' } });
    await waitFor('outcome_unknown');
    expect(await refused(complete(1_000))).toMatch(/is outcome_unknown, not held/);
    await h.executeUpdate(resolveOutcomeUpdate, {
      args: [{ outcome: 'not_received', reason: 'no record at the acquirer', operator: 'ops-3' }],
    });
    expect(await h.result()).toMatchObject({ status: 'not_received', resolution: { outcome: 'not_received' } });
    expect(script.opsOf(ref).filter((o) => o === 'initiate')).toHaveLength(1);
    script.f4.set(ref, []);
  });
});
