// Electricity vending end to end against the sandbox: providers cached, minimum_vend checked,
// the token delivered, and a dropped purchase response never vended twice (H4 by reference
// before any new attempt), each checked against the sandbox ledger and request log. Three of these
// runs are recorded as the replay fixtures in test/vending/histories (RECORD_HISTORIES=1 refreshes
// them; test/vending/replay.test.ts replays them).
import { join } from 'node:path';
import { createLogger } from '../../src/logging/logger';
import {
  VEND_FIRST_STATUS,
  vendStateQuery,
  vendWorkflowId,
  type VendInput,
  type VendStatus,
} from '../../src/shared/vending';
import type { vendElectricityWorkflow } from '../../src/workflows/vending';
import { PENDING_METER, PENDING_VEND_MS } from '../../src/sandbox/vending';
import { runVend, startVend } from '../../src/starters/vending';
import { StarterInputError } from '../../src/starters/input-error';
import { LogCapture, testConfig, useServices } from '../support/stack';
import { shortRef } from '../pos/sandbox';
import { eventually } from '../support/polling';
import { eventTypes } from '../support/history';
import { type RequestLogEntry } from '../support/sandbox-admin';
import { recordHistoryTo } from '../support/replay';
import { electricityVend } from '../support/flow-inputs';

const HISTORIES = join(__dirname, 'histories');

const capture = new LogCapture();
const logger = createLogger({ destination: capture, level: 'info' });
const config = testConfig();
const env = useServices(config, logger);
afterEach(() => env.admin.clearFaults());

const PURCHASE = '^/vending/utilities/electricity$';
const sale = (over: Partial<VendInput> = {}): VendInput => electricityVend(shortRef('v'), over);

async function waitForStatus(h: Awaited<ReturnType<typeof startVend>>, status: VendStatus): Promise<void> {
  await eventually(
    () => h.query(vendStateQuery),
    (s) => s.status === status,
    { attempts: 200, intervalMs: 100, description: `status ${status}` },
  );
}

/** The vending calls the sandbox saw since `from`, as short strings. */
async function vendCalls(from: number): Promise<string[]> {
  const log: RequestLogEntry[] = (await env.admin.requests()).slice(from);
  return log
    .filter((e) => e.path.startsWith('/vending'))
    .map((e) => {
      const op = e.path.endsWith('/service-providers')
        ? 'H1'
        : e.path.endsWith('/lookup')
          ? 'H2'
          : e.path === '/vending/utilities/electricity'
            ? 'H3'
            : 'H4';
      return `${op} ${e.status}`;
    });
}

describe('electricity vending against the sandbox', () => {
  it('vends: lookup reference, one purchase, the token; the provider list is fetched once for many sales', async () => {
    const from = (await env.admin.requests()).length;
    const result = await runVend(env.services.starters, sale());
    expect(result).toMatchObject({ status: 'vended', attempt: 1 });
    expect(result.token).toMatch(/^\d{4}(-\d{4}){4}$/);
    expect(result.meter).toMatchObject({ customer_name: 'ADA SANDBOX', minimum_vend: 1000 });
    expect(result.transaction).toMatchObject({ reference: result.reference, status: 'success', amount: '5000.00' });
    expect(await env.admin.ledger({ reference: result.reference, kind: 'vend' })).toEqual([
      expect.objectContaining({ amount: '5000.00' }),
    ]);
    // The token is the one the service holds for that reference.
    const held = await env.services.api.vending.transactions({ reference: result.reference! });
    expect((held.data as { value_reference?: string }).value_reference).toBe(result.token);

    const second = await runVend(
      env.services.starters,
      sale({ meter_no: '04123456789', meter_type: 'postpaid', amount: 2500 }),
    );
    expect(second.status).toBe('vended');
    const calls = await vendCalls(from);
    expect(calls.filter((c) => c.startsWith('H1'))).toEqual(['H1 200']); // cached for the second sale
    expect(calls.filter((c) => c.startsWith('H3'))).toEqual(['H3 200', 'H3 200']);
  });

  it('an amount below minimum_vend is rejected before any purchase', async () => {
    const from = (await env.admin.requests()).length;
    const result = await runVend(
      env.services.starters,
      sale({ meter_no: '04123456789', meter_type: 'postpaid', amount: 1500 }),
    );
    expect(result).toMatchObject({ status: 'rejected', attempt: 0 });
    expect(result.message).toMatch(/below the meter's minimum_vend 2000/);
    expect((await vendCalls(from)).filter((c) => c.startsWith('H3'))).toEqual([]);
    expect(await env.admin.ledger({ reference: result.reference, kind: 'vend' })).toHaveLength(0);
  });

  it('an unknown meter (H2 400) or an unlisted provider is rejected; nothing vended', async () => {
    const bad = await runVend(env.services.starters, sale({ meter_no: '11111111111' }));
    expect(bad.status).toBe('rejected');
    expect(bad.message).toMatch(/Invalid meter number/);
    const noProvider = await runVend(env.services.starters, sale({ provider: 'ZZEDC' }));
    expect(noProvider).toMatchObject({ status: 'rejected' });
    expect(noProvider.message).toMatch(/ZZEDC is not in the provider list/);
  });

  it('purchase response dropped AFTER the vend: found by reference, one vend, the token delivered', async () => {
    await env.admin.fault({ method: 'POST', path: PURCHASE, kind: 'drop-after-processing', count: 1 });
    const from = (await env.admin.requests()).length;
    const h = await startVend(env.services.starters, sale());
    const result = await h.result();
    await recordHistoryTo(HISTORIES, h, 'vend-answer-lost-found-vended');
    expect(result).toMatchObject({ status: 'vended', attempt: 1 });
    expect(result.token).toMatch(/^\d{4}(-\d{4}){4}$/);
    expect(result.steps.map((s) => `${s.op}:${s.outcome}`)).toEqual([
      'lookup:found',
      'purchase:unknown',
      'check:found',
    ]);
    expect(await env.admin.ledger({ reference: result.reference, kind: 'vend' })).toHaveLength(1);
    expect((await vendCalls(from)).filter((c) => !c.startsWith('H1'))).toEqual(['H2 200', 'H3 dropped', 'H4 200']);
  });

  it('purchase dropped BEFORE processing: H4 404, one retry with the same reference, one vend', async () => {
    await env.admin.fault({ method: 'POST', path: PURCHASE, kind: 'drop-before-processing', count: 1 });
    const from = (await env.admin.requests()).length;
    const h = await startVend(env.services.starters, sale());
    const result = await h.result();
    await recordHistoryTo(HISTORIES, h, 'vend-not-found-retry-vended');
    expect(result).toMatchObject({ status: 'vended', attempt: 2 });
    expect(result.steps.map((s) => `${s.op}:${s.outcome}`)).toEqual([
      'lookup:found',
      'purchase:unknown',
      'check:not_found',
      'purchase:response',
    ]);
    expect(await env.admin.ledger({ reference: result.reference, kind: 'vend' })).toHaveLength(1);
    const log = (await env.admin.requests()).slice(from).filter((e) => e.path === '/vending/utilities/electricity');
    expect(log.map((e) => [e.status, e.reference])).toEqual([
      ['reset', result.reference],
      [200, result.reference],
    ]);
    expect((await vendCalls(from)).filter((c) => !c.startsWith('H1'))).toEqual([
      'H2 200',
      'H3 reset',
      'H4 404',
      'H3 200',
    ]);
  });

  it('never arrives twice: bounded, not_vended, nothing in the ledger', async () => {
    await env.admin.fault({ method: 'POST', path: PURCHASE, kind: 'drop-before-processing', count: 2 });
    const result = await runVend(env.services.starters, sale());
    expect(result).toMatchObject({ status: 'not_vended', attempt: 2 });
    expect(await env.admin.ledger({ reference: result.reference, kind: 'vend' })).toHaveLength(0);
  });

  it('H4 unavailable after a lost answer: parked as outcome_unknown, never resent; when H4 answers again the sale ends vended, one vend', async () => {
    await env.admin.fault({ method: 'POST', path: PURCHASE, kind: 'drop-after-processing', count: 1 });
    await env.admin.fault({ method: 'GET', path: '/vending/transactions', kind: 'error5xx', status: 503 });
    const h = await startVend(
      env.services.starters,
      sale({
        options: { checkSettleDelay: '100ms', checkTimeout: '4s', requeryBackoff: '500ms', requeryMaxBackoff: '1s' },
      }),
    );
    await waitForStatus(h, 'outcome_unknown');
    expect((await h.describe()).searchAttributes.PaymentStatus).toEqual(['outcome_unknown']);
    await env.admin.clearFaults();
    const result = await h.result();
    expect(result).toMatchObject({ status: 'vended', attempt: 1 });
    expect(result.token).toMatch(/^\d{4}(-\d{4}){4}$/);
    expect(result.steps.filter((s) => s.op === 'purchase')).toHaveLength(1);
    expect(await env.admin.ledger({ reference: result.reference, kind: 'vend' })).toHaveLength(1);
  });

  it('a pending vend (200, status pending) is requeried until the sandbox completes it: vended with the token, one H3', async () => {
    const from = (await env.admin.requests()).length;
    const h = await startVend(
      env.services.starters,
      sale({ meter_no: PENDING_METER, options: { requeryBackoff: '300ms', requeryMaxBackoff: '500ms' } }),
    );
    await waitForStatus(h, 'pending');
    expect((await h.query(vendStateQuery)).steps.at(-1)).toMatchObject({
      op: 'purchase',
      outcome: 'response',
      detail: 'pending',
    });
    await env.admin.advanceClock(PENDING_VEND_MS + 1000);
    const result = await h.result();
    await recordHistoryTo(HISTORIES, h, 'vend-pending-requeried-vended');
    expect(result).toMatchObject({ status: 'vended', attempt: 1 });
    expect(result.token).toMatch(/^\d{4}(-\d{4}){4}$/);
    const calls = (await vendCalls(from)).filter((c) => !c.startsWith('H1'));
    expect(calls.filter((c) => c.startsWith('H3'))).toEqual(['H3 200']);
    expect(calls.filter((c) => c.startsWith('H4')).length).toBeGreaterThanOrEqual(1);
    expect(await env.admin.ledger({ reference: result.reference, kind: 'vend' })).toHaveLength(1);
  });

  describe('search attributes, written once per change', () => {
    type Fields = Record<string, { data?: Uint8Array | null } | undefined>;
    interface AttributeEvents {
      upsertWorkflowSearchAttributesEventAttributes?: { searchAttributes?: { indexedFields?: Fields | null } | null };
      workflowExecutionStartedEventAttributes?: { searchAttributes?: { indexedFields?: Fields | null } | null };
    }
    const decoded = (fields: Fields | null | undefined) =>
      Object.fromEntries(
        Object.entries(fields ?? {}).map(([k, p]) => [k, JSON.parse(Buffer.from(p?.data ?? []).toString()) as unknown]),
      );
    /** What the start event carried, and each upsert's fields, in order. */
    const attributeWrites = async (h: { fetchHistory(): Promise<{ events?: unknown[] | null }> }) => {
      const events = ((await h.fetchHistory()).events ?? []) as AttributeEvents[];
      return {
        started: decoded(events[0].workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields),
        // The flow's own writes: the SDK's TemporalChangeVersion upsert that comes with a patch is not one.
        upserts: events
          .filter((e) => e.upsertWorkflowSearchAttributesEventAttributes)
          .map((e) => decoded(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields))
          .filter((fields) => !('TemporalChangeVersion' in fields)),
      };
    };
    const upserts = async (h: { fetchHistory(): Promise<{ events?: unknown[] | null }> }) =>
      (await attributeWrites(h)).upserts.length;
    const attributes = async (h: Awaited<ReturnType<typeof startVend>>) => {
      const sa = (await h.describe()).searchAttributes;
      return { flow: sa.PaymentFlow?.[0], reference: sa.PaymentReference?.[0], status: sa.PaymentStatus?.[0] };
    };

    it('a sale started by the starter shows its order and first step from the start; one upsert, at the end', async () => {
      const input = sale();
      const h = await startVend(env.services.starters, input);
      const result = await h.result();
      expect(result.status).toBe('vended');
      expect(await attributes(h)).toEqual({ flow: 'vend', reference: result.reference, status: 'vended' });
      const writes = await attributeWrites(h);
      // What an operator finds before the worker's first task: the order and the first step.
      expect(writes.started).toEqual({
        PaymentFlow: 'vend',
        PaymentReference: input.order_ref,
        PaymentStatus: VEND_FIRST_STATUS,
        PaymentCurrency: 'NGN',
      });
      // The service reference with the end: the steps between are the query's (purchasing is not written).
      expect(writes.upserts).toEqual([{ PaymentReference: result.reference, PaymentStatus: 'vended' }]);
      // The lookup (H1+H2) ran as a local activity inside the first workflow task: its marker, one
      // activity task (the purchase, H3) and the workflow task it woke. At the end, the event
      // hand-over asks once whether the deployment has an endpoint (this test's worker has none): its
      // local activity's marker. The vend is PINNED, so no patch guards it: no patch marker, no
      // TemporalChangeVersion upsert (src/workflows/steps/merchant-events.ts).
      const types = (await eventTypes(h)).map((t) => t.replace('EVENT_TYPE_', ''));
      expect(types.filter((t) => t === 'MARKER_RECORDED')).toHaveLength(2); // the lookup, the hand-over
      expect(types.filter((t) => t === 'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES')).toHaveLength(1); // the end's
      expect(types.filter((t) => t === 'ACTIVITY_TASK_SCHEDULED')).toHaveLength(1);
      expect(types.filter((t) => t === 'WORKFLOW_TASK_COMPLETED')).toHaveLength(2);
      expect(types).toHaveLength(14);
    });

    it('a sale started without attributes (a raw start) writes them itself', async () => {
      const input = sale();
      const h = await env.services.starters.client.workflow.start<typeof vendElectricityWorkflow>(
        'vendElectricityWorkflow',
        {
          workflowId: vendWorkflowId(input.order_ref),
          taskQueue: env.services.starters.taskQueue,
          args: [input],
        },
      );
      const result = await h.result();
      expect(result.status).toBe('vended');
      expect(await attributes(h)).toEqual({ flow: 'vend', reference: result.reference, status: 'vended' });
      expect((await h.describe()).searchAttributes.PaymentCurrency).toEqual(['NGN']);
      expect(await upserts(h)).toBe(2); // one more: the start's attributes
    });

    it('a sale rejected after the lookup still shows the service reference and its status', async () => {
      const h = await startVend(
        env.services.starters,
        sale({ meter_no: '04123456789', meter_type: 'postpaid', amount: 1500 }),
      );
      const result = await h.result();
      expect(result.status).toBe('rejected');
      expect(await attributes(h)).toEqual({ flow: 'vend', reference: result.reference, status: 'rejected' });
    });
  });

  it('starter refuses bad input and a second sale for the same order', async () => {
    const refused = startVend(env.services.starters, sale({ amount: 99.5 }));
    await expect(refused).rejects.toBeInstanceOf(StarterInputError);
    await expect(refused).rejects.toThrow(/^invalid electricity vend input: amount must be a whole amount/);
    const input = sale();
    const h = await startVend(env.services.starters, input);
    await expect(startVend(env.services.starters, input)).rejects.toThrow(/already started/i);
    expect((await h.result()).status).toBe('vended');
  });

  it('no reference was ever vended twice in this file', async () => {
    const ledger = await env.admin.ledger({ kind: 'vend' });
    expect(ledger.length).toBeGreaterThanOrEqual(6);
    expect(new Set(ledger.map((e) => e.reference)).size).toBe(ledger.length);
  });
});
