// POS terminal end to end: dev server, the project's worker and activities, the API client over
// real HTTP, and the sandbox with its faults. Every outcome is checked against the sandbox
// ledger (one sale at most per merchant_ref) and its request log (no F3 resent unless the F4
// just before it answered 404). Then a scan: pin_key is absent from history (raw and decoded
// through the codec) and from every log line.
import { temporal } from '@temporalio/proto';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { createLogger } from '../../src/logging/logger';
import type { RunningServices } from '../../src/stack/services';
import type { PosTransactionResult } from '../../src/shared/pos-terminal';
import {
  openPosTerminalSession,
  posTransactionHandle,
  runPosTransaction,
  startPosTransaction,
  type PosTerminalSession,
} from '../../src/starters/pos-terminal';
import { StarterInputError } from '../../src/starters/input-error';
import type { StarterContext } from '../../src/starters/connect';
import { LogCapture, startServices, testConfig } from '../support/stack';
import { assertNoRetryWithoutRequery } from './helpers';
import { collectPayloads, historyTexts, rawHistoryText } from '../support/history';
import { SecretUnavailableError } from '../../src/claim-check/store';
import {
  POS_SEALED_FIELDS,
  PosTransactionInputSchema,
  posTransactionStateQuery,
  posTransactionWorkflowId,
  type PosSealedCardData,
} from '../../src/shared/pos-terminal';
import type { posTerminalTransactionWorkflow } from '../../src/workflows/pos-terminal';
import { posCallsFromLog, sandboxCard, shortRef } from './sandbox';
import { SandboxAdmin } from '../support/sandbox-admin';
import { eventually } from '../support/polling';

const capture = new LogCapture();
const logger = createLogger({ destination: capture, level: 'debug' });
const config = testConfig({ LOG_LEVEL: 'debug' });
let services: RunningServices;
let admin: SandboxAdmin;
let ctx: StarterContext;
let session: PosTerminalSession;
const refs: string[] = [];

beforeAll(async () => {
  services = await startServices(config, { logger });
  admin = new SandboxAdmin(services.sandboxUrl!);
  ctx = services.starters;
  session = await openPosTerminalSession(services.starters, { serial_no: 'SN-0001' });
}, 60_000);
afterAll(async () => {
  session?.close();
  await services?.stop();
});
afterEach(() => admin.clearFaults());

async function sale(last4: string, prefix: string): Promise<{ ref: string; result: PosTransactionResult }> {
  const ref = shortRef(prefix);
  refs.push(ref);
  const result = await runPosTransaction(ctx, sandboxCard(last4, ref, session.terminalId, session.pinKey()), session);
  return { ref, result };
}

async function sales(ref: string) {
  return admin.ledger({ reference: ref, kind: 'pos_sale' });
}

describe('POS terminal transaction against the sandbox', () => {
  it('session: F1 gives the terminal, F2 a 32-hex pin_key held by the session only', () => {
    expect(session.terminalId).toBe('2SBX0001');
    expect(session.pinKey()).toMatch(/^[0-9A-F]{32}$/);
    expect(JSON.stringify(session)).not.toContain(session.pinKey());
  });

  it('00: approved, one F3, no requery, one sale in the ledger', async () => {
    const { ref, result } = await sale('0000', 'ok');
    expect(result).toMatchObject({ status: 'approved', responseCode: '00', attempt: 1 });
    expect(result.transaction).toMatchObject({
      merchant_ref: ref,
      card_pan_masked: '539983******0000',
      amount: 250000,
    });
    expect(await sales(ref)).toHaveLength(1);
    expect(posCallsFromLog(await admin.requests(), ref).map((c) => c.op)).toEqual(['initiate']);
  });

  it('response dropped AFTER the sandbox processed the sale: the requery finds it, no second sale', async () => {
    await admin.fault({ method: 'POST', path: '/transaction', kind: 'drop-after-processing', count: 1 });
    const { ref, result } = await sale('0000', 'dra');
    expect(result).toMatchObject({ status: 'approved', responseCode: '00', attempt: 1 });
    expect(result.steps).toEqual([
      { op: 'initiate', attempt: 1, outcome: 'unknown', detail: 'OutcomeUnknown' },
      { op: 'requery', attempt: 1, outcome: 'found', response_code: '00' },
    ]);
    expect(await sales(ref)).toHaveLength(1);
    const log = (await admin.requests()).filter((e) => e.reference === ref || e.path.endsWith(`/by-ref/${ref}`));
    expect(log.map((e) => `${e.method} ${e.status}`)).toEqual(['POST dropped', 'GET 200']);
  });

  it('response dropped BEFORE processing: 404, then a retry with the same merchant_ref, and one sale', async () => {
    await admin.fault({ method: 'POST', path: '/transaction', kind: 'drop-before-processing', count: 1 });
    const { ref, result } = await sale('0000', 'drb');
    expect(result).toMatchObject({ status: 'approved', responseCode: '00', attempt: 2 });
    expect(result.steps.map((s) => `${s.op}:${s.outcome}`)).toEqual([
      'initiate:unknown',
      'requery:not_found',
      'initiate:response',
    ]);
    expect(await sales(ref)).toHaveLength(1);
    const calls = posCallsFromLog(await admin.requests(), ref);
    expect(calls).toEqual([
      { op: 'initiate', merchantRef: ref },
      { op: 'requery', merchantRef: ref, answer: 'not_found' },
      { op: 'initiate', merchantRef: ref },
    ]);
    assertNoRetryWithoutRequery(calls);
  });

  it('a 5xx on F3 is an unknown outcome too: requery first (404 here), then the retry', async () => {
    await admin.fault({ method: 'POST', path: '/transaction', kind: 'error5xx', status: 502, count: 1 });
    const { ref, result } = await sale('0000', 'e5x');
    expect(result).toMatchObject({ status: 'approved', attempt: 2 });
    expect(await sales(ref)).toHaveLength(1);
    assertNoRetryWithoutRequery(posCallsFromLog(await admin.requests(), ref));
  });

  it('91: requery by merchant_ref shows the issuer approved → approved, one sale, never resent', async () => {
    const { ref, result } = await sale('0091', 'c91');
    expect(result).toMatchObject({ status: 'approved', responseCode: '00', attempt: 1 });
    expect(result.steps.map((s) => `${s.op}:${s.outcome}:${s.response_code ?? ''}`)).toEqual([
      'initiate:response:91',
      'requery:found:00',
    ]);
    expect(await sales(ref)).toHaveLength(1);
  });

  it('96: requery 404 (nothing recorded) → safe retry → approved, one sale', async () => {
    const { ref, result } = await sale('0096', 'c96');
    expect(result).toMatchObject({ status: 'approved', responseCode: '00', attempt: 2 });
    expect(result.steps.map((s) => `${s.op}:${s.outcome}:${s.response_code ?? ''}`)).toEqual([
      'initiate:response:96',
      'requery:not_found:',
      'initiate:response:00',
    ]);
    expect(await sales(ref)).toHaveLength(1);
    assertNoRetryWithoutRequery(posCallsFromLog(await admin.requests(), ref));
  });

  it('51: declined, "ask for another card", no requery, no sale', async () => {
    const { ref, result } = await sale('0051', 'c51');
    expect(result).toMatchObject({
      status: 'declined',
      responseCode: '51',
      action: 'Insufficient funds: ask for another card',
      attempt: 1,
    });
    expect(await sales(ref)).toHaveLength(0);
    expect(posCallsFromLog(await admin.requests(), ref).map((c) => c.op)).toEqual(['initiate']);
  });

  it('55: declined, "retry with a fresh card read", no requery, no sale', async () => {
    const { ref, result } = await sale('0055', 'c55');
    expect(result).toMatchObject({
      status: 'declined',
      responseCode: '55',
      action: 'Incorrect PIN: retry with a fresh card read',
      attempt: 1,
    });
    expect(await sales(ref)).toHaveLength(0);
    expect(posCallsFromLog(await admin.requests(), ref).map((c) => c.op)).toEqual(['initiate']);
  });

  it('every drop bounded: F3 never arrives → 3 attempts, each after a 404 requery, then not_received, no sale', async () => {
    await admin.fault({ method: 'POST', path: '/transaction', kind: 'drop-before-processing', count: 3 });
    const { ref, result } = await sale('0000', 'all');
    expect(result).toMatchObject({ status: 'not_received', attempt: 3 });
    expect(await sales(ref)).toHaveLength(0);
    const calls = posCallsFromLog(await admin.requests(), ref);
    expect(calls.filter((c) => c.op === 'initiate')).toHaveLength(3);
    assertNoRetryWithoutRequery(calls);
  });

  it('requery unavailable after a lost answer: parked as outcome_unknown, F3 never resent; when F4 answers again the real outcome (the drop-after sale stays single)', async () => {
    await admin.fault({ method: 'POST', path: '/transaction', kind: 'drop-after-processing', count: 1 });
    await admin.fault({ method: 'GET', path: '/transaction/by-ref/', kind: 'error5xx', status: 503 });
    const ref = shortRef('unk');
    refs.push(ref);
    const input = sandboxCard('0000', ref, session.terminalId, session.pinKey(), {
      options: { requerySettleDelay: '100ms', requeryTimeout: '4s', requeryBackoff: '500ms', requeryMaxBackoff: '1s' },
    });
    const h = await startPosTransaction(ctx, input, session);
    const parked = await eventually(
      () => h.query(posTransactionStateQuery),
      (s) => s.status === 'outcome_unknown',
      { timeoutMs: 30_000, description: 'the sale parked as outcome_unknown', returnLastOnTimeout: true },
    );
    expect(parked.status).toBe('outcome_unknown');
    expect((await h.describe()).searchAttributes.PaymentStatus).toEqual(['outcome_unknown']);
    await admin.clearFaults();
    const result = await h.result();
    expect(result).toMatchObject({ status: 'approved', responseCode: '00', attempt: 1 });
    expect(await sales(ref)).toHaveLength(1); // the sandbox did the sale; we did not double it
    expect(posCallsFromLog(await admin.requests(), ref).filter((c) => c.op === 'initiate')).toHaveLength(1);
  });

  it('field rules are checked before anything is sent (starter and workflow)', async () => {
    const ref = shortRef('bad');
    const bad = sandboxCard('0000', ref, session.terminalId, session.pinKey(), {
      card_sequence_number: '1',
      account_type: '0020',
    });
    await expect(startPosTransaction(ctx, bad, session)).rejects.toThrow(StarterInputError);
    await expect(startPosTransaction(ctx, bad, session)).rejects.toThrow(
      /card_sequence_number must be exactly 3 digits.*account_type/,
    );
    await expect(posTransactionHandle(ctx, ref).describe()).rejects.toThrow(); // never started
    expect((await admin.requests()).some((e) => e.reference === ref)).toBe(false);
  });

  it('a second start for the same merchant_ref is refused', async () => {
    const ref = shortRef('dup');
    refs.push(ref);
    const input = sandboxCard('0000', ref, session.terminalId, session.pinKey());
    const h = await startPosTransaction(ctx, input, session);
    await expect(startPosTransaction(ctx, input, session)).rejects.toThrow(/already started/i);
    await h.result();
    expect(await sales(ref)).toHaveLength(1);
  });

  it('over every transaction of this file, the sandbox never saw an F3 resent without a 404 F4 just before', async () => {
    const calls = posCallsFromLog(await admin.requests());
    expect(calls.filter((c) => c.op === 'initiate').length).toBeGreaterThan(refs.length);
    assertNoRetryWithoutRequery(calls);
    // And no merchant_ref has two sales.
    const ledger = await admin.ledger({ kind: 'pos_sale' });
    const counts = new Map<string, number>();
    for (const e of ledger) counts.set(e.reference, (counts.get(e.reference) ?? 0) + 1);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('pin_key is absent from every history (raw and decoded through the codec) and from every log line', async () => {
    const pinKey = session.pinKey();
    const forms = [
      pinKey,
      pinKey.toLowerCase(),
      Buffer.from(pinKey, 'hex').toString('base64'),
      Buffer.from(pinKey).toString('base64').slice(0, 24),
      Buffer.from(pinKey.toLowerCase()).toString('base64').slice(0, 24),
    ];
    const codec = new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId);
    let decodedPayloads = 0;
    let sawPinBlock = false;
    for (const ref of refs) {
      const handle = posTransactionHandle(ctx, ref);
      const raw = JSON.stringify(temporal.api.history.v1.History.fromObject(await handle.fetchHistory()).toJSON());
      for (const f of forms) expect(raw).not.toContain(f);
      // Every payload decoded: inputs (with the pin_block), activity results, the result.
      const payloads = collectPayloads(JSON.parse(raw));
      const decoded = await codec.decode(payloads);
      const text = decoded.map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('utf8')).join('\n');
      decodedPayloads += decoded.length;
      for (const f of forms) expect(text.toUpperCase()).not.toContain(f.toUpperCase());
      if (/pin_block/.test(text)) sawPinBlock = true;
      expect(text).toContain(ref); // the decoding did work
    }
    expect(decodedPayloads).toBeGreaterThan(refs.length * 3);
    expect(sawPinBlock).toBe(false); // the pin_block is sealed in the claim-check store, not in the input
    // Logs of the worker, activities, SDK, sandbox and API client in this process.
    expect(capture.lines.length).toBeGreaterThan(20);
    const logs = capture.text.toUpperCase();
    for (const f of forms) expect(logs).not.toContain(f.toUpperCase());
    // Nor any card data or PIN block.
    expect(logs).not.toMatch(/"PIN_BLOCK":"[0-9A-F]{16}"/);
    expect(logs).not.toContain('5399830000000000');
  });
});

describe('POS terminal transaction: the card read is sealed', () => {
  /** The handle the flow was started with (from its decoded input). */
  async function cardHandleOf(ref: string): Promise<string> {
    const { decoded } = await historyTexts(posTransactionHandle(ctx, ref), config.encryption);
    return /"handle":"(cc_[A-Za-z0-9_-]{64})"/.exec(decoded)![1];
  }

  it('the sealed card data reaches the service (approved with the right PIN, one sale) and is gone from the store afterwards; no card data in history', async () => {
    const ref = shortRef('sl');
    refs.push(ref);
    const input = sandboxCard('0000', ref, session.terminalId, session.pinKey());
    const result = await runPosTransaction(ctx, input, session);
    // The sandbox answers 55 for a PIN block it cannot read as PIN 1234 and 00 only with the card's data.
    expect(result).toMatchObject({ status: 'approved', responseCode: '00', card: { maskedPan: '539983******0000' } });
    expect(result.transaction).toMatchObject({ card_pan_masked: '539983******0000' });
    expect(await sales(ref)).toHaveLength(1);
    await expect(services.claimCheck.open(await cardHandleOf(ref), 'pos-card')).rejects.toThrow(SecretUnavailableError);

    const handle = posTransactionHandle(ctx, ref);
    const plain = await rawHistoryText(handle);
    const { raw, decoded } = await historyTexts(handle, config.encryption);
    expect(decoded).toContain(ref); // the decoding did work
    expect(decoded).toContain('"bin":"539983","last4":"0000"');
    for (const secret of [input.card_pan, input.track2, input.pin_block!, input.chipdata]) {
      for (const text of [plain, raw, decoded]) expect(text).not.toContain(secret);
    }
    for (const field of POS_SEALED_FIELDS) expect(decoded).not.toContain(`"${field}"`);
  });

  it('96 then a 404 requery: the kept card read serves the proven-safe resend and is discarded at the end', async () => {
    const { ref, result } = await sale('0096', 's96');
    expect(result).toMatchObject({ status: 'approved', attempt: 2 });
    expect(await sales(ref)).toHaveLength(1);
    await expect(services.claimCheck.open(await cardHandleOf(ref), 'pos-card')).rejects.toThrow(SecretUnavailableError);
  });

  it('91 settled by requery: the card read kept for a resend is discarded when the flow ends', async () => {
    const { ref, result } = await sale('0091', 's91');
    expect(result).toMatchObject({ status: 'approved', attempt: 1 });
    await expect(services.claimCheck.open(await cardHandleOf(ref), 'pos-card')).rejects.toThrow(SecretUnavailableError);
  });

  it('a card read whose sealed record expired before F3: card_data_unavailable, nothing sent to the service, nothing charged', async () => {
    const ref = shortRef('exp');
    const full = PosTransactionInputSchema.parse(sandboxCard('0000', ref, session.terminalId, session.pinKey()));
    const card = Object.fromEntries(POS_SEALED_FIELDS.map((f) => [f, full[f]])) as PosSealedCardData;
    const cardHandle = await services.claimCheck.seal('pos-card', card, 1);
    await new Promise((r) => setTimeout(r, 20));
    const rest = Object.fromEntries(
      Object.entries(full).filter(([k]) => !(POS_SEALED_FIELDS as readonly string[]).includes(k)),
    );
    const result = await services.client.workflow.execute<typeof posTerminalTransactionWorkflow>(
      'posTerminalTransactionWorkflow',
      {
        workflowId: posTransactionWorkflowId(ref),
        taskQueue: config.temporal.taskQueue,
        args: [
          {
            ...(rest as Omit<typeof rest, 'card'>),
            card: { handle: cardHandle, bin: '539983', last4: '0000' },
          } as never,
        ],
      },
    );
    expect(result).toMatchObject({ status: 'card_data_unavailable', attempt: 0, steps: [] });
    expect(result.action).toMatch(/nothing was sent and nothing was charged/);
    expect((await admin.requests()).some((e) => e.reference === ref || e.path.endsWith(`/by-ref/${ref}`))).toBe(false);
    expect(await sales(ref)).toHaveLength(0);
  });
});
