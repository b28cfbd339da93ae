// Issue #27 section 6, the receiver: permanent failures answer 400 (the service stops redelivering),
// transient ones 503; concurrent copies of one delivery become one signal; the credit notification's unsigned `version`
// cannot change which fields are trusted; `transaction_indicator` is checked; a client that hangs up
// is logged at debug, without a stack.
//
// Real receiver over real HTTP, real HMAC-SHA512 signatures, the run's dev server. No worker polls
// this file's task queue: what the receiver started or signalled is read from the server (describe,
// the history's signal events, the start event's input decoded with the project's codec).
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { createLogger } from '../../src/logging/logger';
import { closeServer } from '../../src/webhooks/receiver';
import { createTemporalClient } from '../../src/temporal/client';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { virtualAccountCreditWorkflowId, type VirtualAccountCredit } from '../../src/shared/virtual-account-credit';
import { LogCapture, testConfig } from '../support/stack';
import { chargeSuccessfulBody, listenWebhookReceiver, vaCreditBody, vaSignedValues } from '../support/webhook-receiver';
import { hmacSha512Hex, useWebhookReceiver, workflowExists } from '../support/webhook-receiver-harness';
import { eventually } from '../support/polling';

const config = testConfig();
const key = config.payments.secretKey;
const capture = new LogCapture();
const receiver = useWebhookReceiver(config, { logger: createLogger({ destination: capture, level: 'debug' }) });

const sign = (data: string) => hmacSha512Hex(key, data);

const postPayment = (raw: string) =>
  fetch(`${receiver.url}/webhooks`, {
    method: 'POST',
    body: raw,
    headers: { 'Content-Type': 'application/json', 'x-service-encrypted-body': sign(raw) },
  });

const postCredit = (raw: string, signature: string) =>
  fetch(`${receiver.url}/webhooks`, { method: 'POST', body: raw, headers: { 'x-service-signature': signature } });

async function exists(workflowId: string): Promise<boolean> {
  const found = await workflowExists(receiver.client, workflowId);
  if (found) receiver.started.push(workflowId);
  return found;
}

/** The credit the receiver started the credit workflow with, read from the start event and decoded. */
async function creditInput(ref: string): Promise<VirtualAccountCredit> {
  const workflowId = virtualAccountCreditWorkflowId(ref);
  receiver.started.push(workflowId);
  const history = await receiver.client.workflow.getHandle(workflowId).fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const codec = new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId);
  const [decoded] = await codec.decode(payloads as Parameters<typeof codec.decode>[0]);
  return defaultPayloadConverter.fromPayload(decoded);
}

/** A payment notification whose meta nests `depth` objects: valid JSON, but no payload can hold it. */
function deeplyNestedPayment(ref: string, depth: number): string {
  const normal = JSON.parse(chargeSuccessfulBody(ref)) as { Body: { meta: unknown } };
  const raw = JSON.stringify({ ...normal, Body: { ...normal.Body, meta: { order: 'A-1' } } });
  return raw.replace('{"order":"A-1"}', `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
}

describe('permanent failures answer 400, transient ones 503', () => {
  it('a payment reference too long for a workflow id: 400, nothing started', async () => {
    const ref = `long-${'r'.repeat(2000)}`;
    const res = await postPayment(chargeSuccessfulBody(ref));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ received: false });
    expect(await exists(paymentWorkflowId(ref))).toBe(false);
  });

  it('a credit reference too long for a workflow id: 400, nothing started', async () => {
    const ref = `long-${'v'.repeat(2000)}`;
    const body = vaCreditBody(ref, { version: 'v2' });
    const res = await postCredit(JSON.stringify(body), sign(vaSignedValues(body)));
    expect(res.status).toBe(400);
    expect(await exists(virtualAccountCreditWorkflowId(ref))).toBe(false);
  });

  it('a signed payload that cannot be serialised into a workflow payload: 400', async () => {
    const ref = `deep-${randomUUID()}`;
    const raw = deeplyNestedPayment(ref, 30_000);
    expect(raw.length).toBeLessThan(1024 * 1024); // under the body limit: the signature and schema pass
    const res = await postPayment(raw);
    expect(res.status).toBe(400);
    expect(await exists(paymentWorkflowId(ref))).toBe(false);
  });

  it('Temporal unreachable: 503, so the service redelivers', async () => {
    const closed = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
    await closed.connection.close();
    const { server: down, url: downUrl } = await listenWebhookReceiver(config, closed, {
      logger: createLogger({ level: 'silent' }),
    });
    try {
      const raw = chargeSuccessfulBody(`down-${randomUUID()}`);
      const res = await fetch(`${downUrl}/webhooks`, {
        method: 'POST',
        body: raw,
        headers: { 'Content-Type': 'application/json', 'x-service-encrypted-body': sign(raw) },
      });
      expect(res.status).toBe(503);
    } finally {
      await closeServer(down);
    }
  });
});

describe('concurrent copies of one delivery', () => {
  it('become one signal (payment)', async () => {
    const ref = `copies-${randomUUID()}`;
    const raw = chargeSuccessfulBody(ref);
    const answers = await Promise.all(Array.from({ length: 6 }, () => postPayment(raw)));
    expect(answers.map((r) => r.status)).toEqual(Array(6).fill(200));
    receiver.started.push(paymentWorkflowId(ref));
    const history = await receiver.client.workflow.getHandle(paymentWorkflowId(ref)).fetchHistory();
    const signals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes);
    expect(signals).toHaveLength(1);
  });

  it('become one start (virtual-account credit)', async () => {
    const ref = `copies-va-${randomUUID()}`;
    const body = vaCreditBody(ref, { version: 'v2' });
    const raw = JSON.stringify(body);
    const answers = await Promise.all(Array.from({ length: 6 }, () => postCredit(raw, sign(vaSignedValues(body)))));
    expect(answers.map((r) => r.status)).toEqual(Array(6).fill(200));
    const runs = [];
    for await (const wf of receiver.client.workflow.list({
      query: `WorkflowId = '${virtualAccountCreditWorkflowId(ref)}'`,
    }))
      runs.push(wf);
    expect(runs.length).toBeLessThanOrEqual(1);
    expect(await exists(virtualAccountCreditWorkflowId(ref))).toBe(true);
  });
});

describe("the credit notification's unsigned version field does not decide what is trusted", () => {
  it('six-value signature, version removed: accepted as a six-value credit, fee and date not taken', async () => {
    const ref = `nover-${randomUUID()}`;
    const { version: _v, ...body } = vaCreditBody(ref, { version: 'v2', fee_charged: '9999.00' });
    const res = await postCredit(JSON.stringify(body), sign(vaSignedValues(body)));
    expect(res.status).toBe(200);
    const credit = await creditInput(ref);
    expect(credit.version).not.toBe(1);
    expect(credit).not.toHaveProperty('feeCharged');
    expect(credit).not.toHaveProperty('transactionDate');
  });

  it('whole-body signature that says version v3: every field is signed, so fee and date are taken', async () => {
    const ref = `whole-${randomUUID()}`;
    const raw = JSON.stringify(vaCreditBody(ref, { version: 'v3', session_id: 'sess-1' }));
    const res = await postCredit(raw, sign(raw).toUpperCase());
    expect(res.status).toBe(200);
    const credit = await creditInput(ref);
    expect(credit).toMatchObject({ version: 1, feeCharged: '25.00', transactionDate: '2026-11-22T10:00:00.000Z' });
  });

  it('six-value signature with a version v3 and a session id: only the six values are taken', async () => {
    const ref = `v3-${randomUUID()}`;
    const body = vaCreditBody(ref, { version: 'v3', session_id: 'sess-2', fee_charged: '1.00' });
    const res = await postCredit(JSON.stringify(body), sign(vaSignedValues(body)));
    expect(res.status).toBe(200);
    const credit = await creditInput(ref);
    expect(credit).not.toHaveProperty('feeCharged');
    expect(credit.version).toBe(3);
  });
});

describe('transaction_indicator', () => {
  it("signed in the whole body and not 'C': acknowledged (the spec's body), nothing credited", async () => {
    const ref = `debit-${randomUUID()}`;
    const raw = JSON.stringify(vaCreditBody(ref, { transaction_indicator: 'D' }));
    const res = await postCredit(raw, sign(raw));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      response_code: 200,
      transaction_reference: ref,
      response_description: 'Success',
    });
    expect(await exists(virtualAccountCreditWorkflowId(ref))).toBe(false);
  });

  it("unsigned (six-value scheme) and not 'C': refused with 400 naming the field, nothing credited", async () => {
    const ref = `debit-v2-${randomUUID()}`;
    const body = vaCreditBody(ref, { version: 'v2', transaction_indicator: 'D' });
    const res = await postCredit(JSON.stringify(body), sign(vaSignedValues(body)));
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('transaction_indicator');
    expect(await exists(virtualAccountCreditWorkflowId(ref))).toBe(false);
  });
});

describe('a client that hangs up', () => {
  it('is logged at debug, without a stack, and no error is logged', async () => {
    const before = capture.lines.length;
    const { hostname, port } = new URL(receiver.url);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          'POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"Event":',
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 100);
      });
      socket.on('error', reject);
    });
    const lines = async () => capture.records.slice(before);
    const records = await eventually(lines, (rs) => rs.some((r) => r.msg === 'client aborted the request'), {
      timeoutMs: 30_000,
      intervalMs: 50,
      description: 'the abort logged',
      returnLastOnTimeout: true,
    });
    const aborted = records.filter((r) => r.msg === 'client aborted the request');
    expect(aborted).toHaveLength(1);
    expect(aborted[0].level).toBe('debug');
    expect(JSON.stringify(aborted[0])).not.toMatch(/stack|at .*\.ts:\d+/);
    expect(records.filter((r) => r.level === 'error' || r.level === 'warn')).toEqual([]);
  });
});
