// PCI DSS 3.3.1: sensitive authentication data is not stored after authorisation, encrypted or
// not. Every flow kind that handles card data, PINs, OTPs, bank codes, PIN blocks, track2 or BVNs
// runs end to end with distinctive values (the refused ones travel the same path as the accepted
// ones); then every history is fetched and every payload is decoded THROUGH THE CODEC SERVER (as
// the Web UI would), and none of those values may appear anywhere: payloads, failures, search
// attributes, memos, Update arguments, query results, or the log lines of the whole stack.
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { createLogger } from '../../src/logging/logger';
import { SANDBOX_OTP, SANDBOX_PIN, TEST_CARDS } from '../../src/sandbox';
import { PaymentStepError, waitForState, getDirectPaymentState } from '../../src/starters/payment-common';
import { startCardPayment, submitOtp, submitPin, getCardPaymentState } from '../../src/starters/card-payment';
import { startBankPayment, submitBankCode } from '../../src/starters/bank-payment';
import { LogCapture, testConfig } from '../support/stack';
import { useServices } from '../support/stack';

const capture = new LogCapture();
const config = testConfig({ LOG_LEVEL: 'debug' });
const env = useServices(config, createLogger({ level: 'debug', destination: capture }));

/** Secrets sent in this file, each distinctive enough that finding it anywhere means it leaked. */
const secrets = new Map<string, string>();
const handles: WorkflowHandle[] = [];

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** Every payload of a history, decoded by the codec server; every other string as it is. */
async function decodedHistoryText(handle: WorkflowHandle): Promise<string> {
  const history = await handle.fetchHistory();
  const payloads: JsonPayload[] = [];
  const strings: string[] = [];
  const walk = (v: unknown): void => {
    if (v === null || v === undefined) return;
    if (v instanceof Uint8Array) return void strings.push(Buffer.from(v).toString('utf8'));
    if (typeof v === 'string') return void strings.push(v);
    if (Array.isArray(v)) return v.forEach(walk);
    if (typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    if (o.metadata && typeof o.metadata === 'object' && 'data' in o) {
      // A Payload: what the Web UI would show is the codec server's decoding of it.
      const metadata = Object.fromEntries(
        Object.entries(o.metadata as Record<string, Uint8Array>).map(([k, b]) => [
          k,
          Buffer.from(b).toString('base64'),
        ]),
      );
      payloads.push({ metadata, data: o.data ? Buffer.from(o.data as Uint8Array).toString('base64') : undefined });
    }
    Object.values(o).forEach(walk);
  };
  walk(history);
  const res = await fetch(`${env.services.codecUrl}/decode`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${config.codec.token}`,
      'x-namespace': config.temporal.namespace,
    },
    body: JSON.stringify({ payloads }),
  });
  expect(res.status).toBe(200);
  const decoded = ((await res.json()) as { payloads: JsonPayload[] }).payloads;
  expect(decoded).toHaveLength(payloads.length);
  return [...strings, ...decoded.map((p) => Buffer.from(p.data ?? '', 'base64').toString('utf8'))].join('\n');
}

/**
 * Where `value` stands as a whole token in `text` (not inside a longer run of letters or digits),
 * with the text around it; undefined when it does not. A PIN or CVV is four digits, so a bare
 * substring search also matches inside run ids, timestamps and the sandbox's numeric ids by chance;
 * a leaked secret stands as its own token ("7391", pin=7391).
 */
function tokenIn(text: string, value: string): string | undefined {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`(?<![0-9A-Za-z])${escaped}(?![0-9A-Za-z])`).exec(text);
  return m ? text.slice(Math.max(0, m.index - 60), m.index + value.length + 60) : undefined;
}

const refusedAs = (p: Promise<unknown>, kind: PaymentStepError['kind']) =>
  expect(
    p.then(
      () => undefined,
      (e: unknown) => (e as PaymentStepError).kind,
    ),
  ).resolves.toBe(kind);

describe('card data, PINs, OTPs and bank codes never reach Temporal history or logs', () => {
  it('card (PIN then OTP), with a refused PIN and a refused OTP on the way', async () => {
    const ref = `scan-card-${randomUUID()}`;
    const cvv = '8642';
    const wrongPin = '7391';
    const wrongOtp = '48291736';
    secrets.set('PAN', TEST_CARDS.pinThenOtp).set('CVV', cvv).set('refused PIN', wrongPin).set('refused OTP', wrongOtp);
    const handle = await startCardPayment(env.services.starters, {
      transactionRef: ref,
      amount: 900_000,
      currency: 'NGN',
      card: { number: TEST_CARDS.pinThenOtp, cvv, expiryMonth: '09', expiryYear: '33' },
      customer: { name: 'Ada Obi', email: 'ada@example.com' },
      webhookGraceMs: 10_000,
    });
    handles.push(handle);
    await waitForState(
      () => getCardPaymentState(env.services.starters, ref),
      (s) => s.status === 'awaiting_pin',
    );
    await refusedAs(submitPin(env.services.starters, ref, wrongPin), 'refused');
    await submitPin(env.services.starters, ref, SANDBOX_PIN);
    await refusedAs(submitOtp(env.services.starters, ref, wrongOtp), 'refused');
    await submitOtp(env.services.starters, ref, SANDBOX_OTP);
    expect(await handle.result()).toMatchObject({ status: 'success', card: { bin: '555555', last4: '4444' } });
  });

  it('bank debit by OTP, with a refused code on the way', async () => {
    const ref = `scan-bank-${randomUUID()}`;
    const wrongCode = '91827364';
    secrets.set('refused bank code', wrongCode);
    const handle = await startBankPayment(env.services.starters, {
      transactionRef: ref,
      amount: 250_000,
      currency: 'NGN',
      bank: { bankCode: '058', accountOrPhone: '0123456789' },
      customer: { name: 'Ada Obi', email: 'ada@example.com' },
      webhookGraceMs: 10_000,
    });
    handles.push(handle);
    await waitForState(
      () => getDirectPaymentState(env.services.starters, ref),
      (s) => s.status === 'awaiting_code',
    );
    await refusedAs(submitBankCode(env.services.starters, ref, wrongCode), 'refused');
    await submitBankCode(env.services.starters, ref, SANDBOX_OTP);
    expect(await handle.result()).toMatchObject({ status: 'success' });
  });

  it('no secret in any decoded history (payloads, failures, search attributes, memos) nor in any log line', async () => {
    expect(handles.length).toBeGreaterThanOrEqual(2);
    // The token match finds a leaked value however it is framed, and ignores digits inside longer runs.
    for (const framed of ['{"pin":"7391"}', 'pin=7391&x', 'PIN 7391.']) expect(tokenIn(framed, '7391')).toBeDefined();
    for (const unrelated of ['run 17391 at', 'a7391b', '2026-11-23T07:39:1'])
      expect(tokenIn(unrelated, '7391')).toBeUndefined();
    const texts = await Promise.all(handles.map(decodedHistoryText));
    // The scan reads decoded payloads: the references and the masked card are there...
    expect(texts.join('\n')).toContain(handles[0].workflowId.replace(/^payment-/, ''));
    expect(texts[0]).toContain('"last4":"4444"');
    expect(texts[0]).toContain('Invalid PIN'); // the refusal's failure message was decoded too
    // ...and none of the secrets, nor a field that would carry one.
    for (const [what, value] of secrets) {
      for (const text of texts) expect({ what, foundIn: tokenIn(text, value) }).toEqual({ what, foundIn: undefined });
      expect({ what, inLogs: tokenIn(capture.text, value) }).toEqual({ what, inLogs: undefined });
    }
    for (const text of texts)
      for (const field of ['"cvv":', '"number":', '"pin":', '"otp":', '"otp_token":', '"expiryMonth":'])
        expect(text).not.toContain(field);
    expect(capture.lines.length).toBeGreaterThan(10); // the stack did log (debug level)
  });
});
