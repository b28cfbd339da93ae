// Operator tools against a running stack (dev server, worker, sandbox over HTTP): the lists find
// what needs a person through the search attributes, and the actions settle it on the flow itself.
import { createHmac, randomUUID } from 'node:crypto';
import type { RunningServices } from '../../src/stack/services';
import { openPosTerminalSession, startPosTransaction, type PosTerminalSession } from '../../src/starters/pos-terminal';
import { StarterInputError } from '../../src/starters/input-error';
import {
  attentionSummary,
  listAttention,
  releaseUnmatchedWebhook,
  resolveParkedFlow,
  resolveReconciliationFinding,
  type AttentionItem,
  type AttentionKind,
} from '../../src/starters/ops';
import { PaymentFlow, PaymentReference, ReconciliationStatus } from '../../src/shared/search-attributes';
import { reconciliationMarkWorkflowId, type ReconciliationMark } from '../../src/shared/reconciliation';
import { posTransactionStateQuery, type PosTransactionResult } from '../../src/shared/pos-terminal';
import { startServices, testConfig } from '../support/stack';
import { sandboxCard, shortRef } from '../pos/sandbox';
import { eventually } from '../support/polling';
import { SandboxAdmin } from '../support/sandbox-admin';

jest.setTimeout(120_000);

const config = testConfig();
let services: RunningServices;
let admin: SandboxAdmin;
let session: PosTerminalSession;

beforeAll(async () => {
  services = await startServices(config);
  admin = new SandboxAdmin(services.sandboxUrl!);
  session = await openPosTerminalSession(services.starters, { serial_no: 'SN-0001' });
}, 60_000);
afterAll(async () => {
  session?.close();
  await services?.stop();
});

/** Visibility is eventually consistent: read the list until it says what we expect. */
const listUntil = (kind: AttentionKind, ok: (items: AttentionItem[]) => boolean): Promise<AttentionItem[]> =>
  eventually(() => listAttention(services.starters, kind), ok, {
    attempts: 100,
    intervalMs: 200,
    description: `the ${kind} list`,
  });

describe('operator tools against a running stack', () => {
  it('outcome-unknown lists a POS sale the service cannot confirm; ops resolve settles it with the operator and reason recorded, and it leaves the list', async () => {
    await admin.fault({ method: 'POST', path: '/transaction', kind: 'drop-after-processing', count: 1 });
    await admin.fault({ method: 'GET', path: '/transaction/by-ref/', kind: 'error5xx', status: 503 });
    try {
      const ref = shortRef('ops');
      const input = sandboxCard('0000', ref, session.terminalId, session.pinKey(), {
        options: {
          requerySettleDelay: '100ms',
          requeryTimeout: '2s',
          requeryBackoff: '500ms',
          requeryMaxBackoff: '1s',
        },
      });
      const handle = await startPosTransaction(services.starters, input, session);
      const parked = await eventually(
        () => handle.query(posTransactionStateQuery),
        (s) => s.status === 'outcome_unknown',
        { timeoutMs: 30_000, description: 'the sale parked as outcome_unknown', returnLastOnTimeout: true },
      );
      expect(parked.status).toBe('outcome_unknown');

      const items = await listUntil('outcome-unknown', (l) => l.some((x) => x.workflowId === handle.workflowId));
      expect(items.find((x) => x.workflowId === handle.workflowId)).toMatchObject({
        flow: 'pos-terminal',
        reference: ref,
        status: 'outcome_unknown',
        running: true,
      });
      expect((await attentionSummary(services.starters))['outcome-unknown']).toBeGreaterThanOrEqual(1);

      await expect(
        resolveParkedFlow(services.starters, handle.workflowId, { outcome: 'success', reason: 'x', operator: 'ops' }),
      ).rejects.toThrow();
      const resolution = await resolveParkedFlow(services.starters, handle.workflowId, {
        outcome: 'approved',
        reason: 'terminal slip 0042',
        operator: 'ops@merchant',
      });
      expect(resolution).toMatchObject({
        outcome: 'approved',
        reason: 'terminal slip 0042',
        operator: 'ops@merchant',
        resolvedAt: expect.any(String),
      });
      const result = (await handle.result()) as PosTransactionResult;
      expect(result).toMatchObject({ status: 'approved', resolution: { operator: 'ops@merchant' } });
      await listUntil('outcome-unknown', (l) => !l.some((x) => x.workflowId === handle.workflowId));
    } finally {
      await admin.clearFaults();
    }
  });

  it('unmatched-webhooks lists a signed payment webhook no flow claimed; release-webhook forwards nothing, ends the holder, and it leaves the list', async () => {
    const ref = `orphan-${randomUUID()}`;
    const body = JSON.stringify({
      Event: 'charge_successful',
      TransactionRef: ref,
      Body: {
        amount: 10000,
        transaction_ref: ref,
        gateway_ref: `${ref}_1`,
        transaction_status: 'Success',
        email: 'p@example.com',
        merchant_id: 'M',
        currency: 'NGN',
        transaction_type: 'Card',
        merchant_amount: 9850,
        created_at: '2026-11-22T10:00:00.000Z',
        meta: {},
        payment_information: { payment_type: 'card' },
        is_recurring: false,
      },
    });
    const signature = createHmac('sha512', config.payments.secretKey).update(body).digest('hex');
    const res = await fetch(`${services.webhookUrl}/webhooks`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-service-encrypted-body': signature },
    });
    expect(res.status).toBe(200);

    const items = await listUntil('unmatched-webhooks', (l) => l.some((x) => x.reference === ref));
    const holder = items.find((x) => x.reference === ref)!;
    expect(holder).toMatchObject({ flow: 'unmatched-webhook', status: 'unmatched', running: true });
    const events = await releaseUnmatchedWebhook(services.starters, holder.workflowId);
    expect(events).toEqual([expect.objectContaining({ transactionRef: ref, amount: 10000 })]);
    await listUntil('unmatched-webhooks', (l) => !l.some((x) => x.reference === ref));
  });

  it('reconciliation-mismatches lists a reference whose latest mark is a finding; resolve-finding records who and why and it leaves the list', async () => {
    const reference = `rec-${randomUUID().slice(0, 8)}`;
    // The mark a reconciliation run leaves for an amount that differs (test/reconciliation proves the run makes it).
    const mark: ReconciliationMark = {
      status: 'mismatch_amount',
      reference,
      reconciliationId: 'reconciliation-2026-11-01-2026-11-01',
    };
    await (
      await services.client.workflow.start('reconciliationMarkWorkflow', {
        workflowId: reconciliationMarkWorkflowId(reference),
        taskQueue: config.temporal.taskQueue,
        args: [mark],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: [
          { key: PaymentFlow, value: 'reconciliation-mark' },
          { key: PaymentReference, value: reference },
          { key: ReconciliationStatus, value: 'mismatch_amount' },
        ],
      })
    ).result();
    // Visibility is eventually consistent: the mark may be listed before its close is.
    const items = await listUntil('reconciliation-mismatches', (l) =>
      l.some((x) => x.reference === reference && !x.running),
    );
    expect(items.find((x) => x.reference === reference)).toMatchObject({ flow: 'reconciliation-mark', running: false });

    const noOperator = await resolveReconciliationFinding(services.starters, reference, {
      operator: '',
      reason: 'x',
    }).catch((e: unknown) => e);
    expect(noOperator).toBeInstanceOf(StarterInputError);
    expect((noOperator as Error).message).toBe('invalid reconciliation resolution input: operator is required');
    const resolved = await resolveReconciliationFinding(services.starters, reference, {
      operator: 'ops@merchant',
      reason: 'refunded the difference',
    });
    expect(resolved).toMatchObject({
      status: 'resolved',
      previous: 'mismatch_amount',
      resolution: { operator: 'ops@merchant', reason: 'refunded the difference' },
    });
    // The older finding run is still in visibility, but it is no longer the reference's latest mark.
    await listUntil('reconciliation-mismatches', (l) => !l.some((x) => x.reference === reference));
    await expect(
      resolveReconciliationFinding(services.starters, reference, { operator: 'ops', reason: 'again' }),
    ).rejects.toThrow(/no open reconciliation finding/);
  });
});
