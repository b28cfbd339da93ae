// Exact signature comparison (issue #29, behaviour 1), over real HTTP against the real receiver and
// the run's dev server, with real HMAC-SHA512 signatures: a payment (E-1) or virtual-account (E-2)
// notification whose signature is right except for its LAST hex character is refused with 401 and
// reaches nothing in Temporal: no holder or credit workflow is started, and a running holder gets no
// signal. The same notification correctly signed does get through (so each check could fail).
//
// No worker polls this file's task queue: what the receiver started or signalled is read from the
// server (describe, and the signal events of the history); the workflows are terminated at the end.
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../src/logging/logger';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { virtualAccountCreditWorkflowId } from '../../src/shared/virtual-account-credit';
import { LogCapture, testConfig } from '../support/stack';
import { chargeSuccessfulBody, vaCreditBody, vaSignedValues } from '../support/webhook-receiver';
import { hmacSha512Hex, useWebhookReceiver, workflowExists } from '../support/webhook-receiver-harness';

const config = testConfig();
const key = config.payments.secretKey;
const receiver = useWebhookReceiver(config, { logger: createLogger({ destination: new LogCapture() }) });

const sign = (data: string) => hmacSha512Hex(key, data);

/** The signature with only its last hex character changed. */
const lastCharWrong = (signature: string): string => signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0');

const post = (body: string, headers: Record<string, string>) =>
  fetch(`${receiver.url}/webhooks`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/json', ...headers },
  });

const exists = (workflowId: string): Promise<boolean> => workflowExists(receiver.client, workflowId);

/** Signals the workflow received (WorkflowExecutionSignaled events in its history). */
async function signalCount(workflowId: string): Promise<number> {
  const history = await receiver.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes).length;
}

const paymentBody = (ref: string, gatewayRef = `${ref}_1_1`) => chargeSuccessfulBody(ref, { gatewayRef });

const creditBody = (ref: string, version?: 'v2' | 'v3') => vaCreditBody(ref, version ? { version } : {});

describe('a payment notification (E-1) signed right except for the last hex character', () => {
  it.each(['x-service-encrypted-body', 'x-squad-encrypted-body'])(
    'is refused with 401 and starts nothing (%s)',
    async (header) => {
      const ref = `sig-${randomUUID()}`;
      const body = paymentBody(ref);
      const res = await post(body, { [header]: lastCharWrong(sign(body)) });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ received: false, error: 'invalid signature' });
      expect(await exists(paymentWorkflowId(ref))).toBe(false);

      // The same bytes with the exact signature start the holder: the check above could fail.
      expect((await post(body, { [header]: sign(body) })).status).toBe(200);
      receiver.started.push(paymentWorkflowId(ref));
      expect(await exists(paymentWorkflowId(ref))).toBe(true);
    },
  );

  it('is refused with 401 and signals nothing into a running holder', async () => {
    const ref = `sig-${randomUUID()}`;
    const workflowId = paymentWorkflowId(ref);
    const first = paymentBody(ref, `${ref}_1_1`);
    expect((await post(first, { 'x-service-encrypted-body': sign(first) })).status).toBe(200);
    receiver.started.push(workflowId);
    expect(await signalCount(workflowId)).toBe(1);

    // Another delivery for the same reference (another gateway_ref: not a duplicate for the receiver).
    const second = paymentBody(ref, `${ref}_1_2`);
    const refused = await post(second, { 'x-service-encrypted-body': lastCharWrong(sign(second)) });
    expect(refused.status).toBe(401);
    // Uppercase, as the service sends it: the last character still counts.
    const upper = await post(second, { 'x-service-encrypted-body': lastCharWrong(sign(second)).toUpperCase() });
    expect(upper.status).toBe(401);
    expect(await signalCount(workflowId)).toBe(1);

    expect((await post(second, { 'x-service-encrypted-body': sign(second) })).status).toBe(200);
    expect(await signalCount(workflowId)).toBe(2);
  });
});

describe('a virtual-account notification (E-2) signed right except for the last hex character', () => {
  it.each([
    ['version 1 (the whole body)', undefined, (raw: string) => sign(raw)],
    ['version 2 (the six values)', 'v2' as const, (raw: string) => sign(vaSignedValues(JSON.parse(raw)))],
    ['version 3 (the six values)', 'v3' as const, (raw: string) => sign(vaSignedValues(JSON.parse(raw)))],
  ])('%s: refused with 401, no credit workflow started', async (_name, version, signatureOf) => {
    const ref = `sig-va-${randomUUID()}`;
    const raw = JSON.stringify(creditBody(ref, version));
    const res = await post(raw, { 'x-service-signature': lastCharWrong(signatureOf(raw)) });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ received: false, error: 'invalid signature' });
    const res2 = await post(raw, { 'x-squad-signature': lastCharWrong(signatureOf(raw)).toUpperCase() });
    expect(res2.status).toBe(401);
    expect(await exists(virtualAccountCreditWorkflowId(ref))).toBe(false);

    // The exact signature starts the credit workflow: the check above could fail.
    expect((await post(raw, { 'x-service-signature': signatureOf(raw) })).status).toBe(200);
    receiver.started.push(virtualAccountCreditWorkflowId(ref));
    expect(await exists(virtualAccountCreditWorkflowId(ref))).toBe(true);
  });
});

describe('a signature with one extra hex character appended', () => {
  // Buffer.from(hex) silently drops an odd trailing character: the comparison checks the text's
  // length too, so the 128 right characters plus a 129th are refused.
  it('is refused with 401 and starts nothing', async () => {
    const ref = `sig-${randomUUID()}`;
    const body = paymentBody(ref);
    const res = await post(body, { 'x-service-encrypted-body': `${sign(body)}0` });
    if (res.status === 200) receiver.started.push(paymentWorkflowId(ref));
    expect(res.status).toBe(401);
    expect(await exists(paymentWorkflowId(ref))).toBe(false);
  });
});
