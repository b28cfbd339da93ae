// Starters survive a Temporal server restart (src/starters/temporal-retry.ts): a query and an
// Update issued while the server is down are retried until it is back, the Update runs once, and
// a server that stays away ends in TemporalUnavailableError, never a bare SDK error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { freePort } from '../../src/http/free-port';
import { startDevServer, type DevServer } from '../../src/stack/temporal-dev-server';
import type { RunningServices } from '../../src/stack/services';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import {
  getCardPaymentState,
  isTransientTemporalError,
  retryTransient,
  startCardPayment,
  startRetrying,
  submitOtp,
  TemporalUnavailableError,
  waitForState,
} from '../../src/starters';
import { SANDBOX_OTP, TEST_CARDS } from '../../src/sandbox';
import { eventually } from '../support/polling';
import { claimCheckDatabaseUrl, startServices, testConfig } from '../support/stack';

jest.setTimeout(120_000);

const grpcError = (code: number) => Object.assign(new Error(`grpc ${code}`), { code, details: '', metadata: {} });

describe('starters retrying while Temporal is briefly unavailable', () => {
  it('retries a transient failure and returns the answer; passes any other failure through at once', async () => {
    let calls = 0;
    await expect(
      retryTransient('q', async () => (++calls < 3 ? Promise.reject(grpcError(14)) : 'answer'), { firstDelayMs: 1 }),
    ).resolves.toBe('answer');
    expect(calls).toBe(3);
    calls = 0;
    const refused = new Error('update validator refused');
    await expect(retryTransient('u', async () => (calls++, Promise.reject(refused)), { firstDelayMs: 1 })).rejects.toBe(
      refused,
    );
    expect(calls).toBe(1);
  });

  it('startRetrying: "already started" after a transient failure is our own earlier start; on the first attempt it is a duplicate', async () => {
    const already = () => new WorkflowExecutionAlreadyStartedError('already started', 'wf', 'type');
    let calls = 0;
    const h = await startRetrying(
      's',
      async () => (++calls === 1 ? Promise.reject(grpcError(14)) : Promise.reject(already())),
      () => 'existing handle',
      { firstDelayMs: 1 },
    );
    expect(h).toBe('existing handle');
    await expect(
      startRetrying(
        's',
        () => Promise.reject(already()),
        () => 'existing handle',
        { firstDelayMs: 1 },
      ),
    ).rejects.toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
  });

  it('gives up with TemporalUnavailableError after its window', async () => {
    const err = await retryTransient('q', () => Promise.reject(grpcError(14)), {
      withinMs: 50,
      firstDelayMs: 10,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemporalUnavailableError);
    expect(isTransientTemporalError(grpcError(5))).toBe(false); // NOT_FOUND is an answer
  });
});

describe('through a real server restart', () => {
  let dir: string;
  let server: DevServer | undefined;
  let services: RunningServices | undefined;
  let port: number;
  const start = () => startDevServer({ port, uiPort: null, dbFile: join(dir, 'temporal.db') });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'starter-restart-'));
    port = await freePort();
    server = await start();
    const config = testConfig({
      TEMPORAL_ADDRESS: server.address,
      CLAIM_CHECK_DATABASE_URL: claimCheckDatabaseUrl(),
      TEMPORAL_TASK_QUEUE: `restart-${randomUUID()}`,
    });
    services = await startServices(config);
  });
  afterAll(async () => {
    await services?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a query and an OTP sent while the server restarts are answered once it is back; the payment completes', async () => {
    const ref = `restart-${randomUUID()}`;
    const s = services!;
    await startCardPayment(s.starters, {
      transactionRef: ref,
      amount: 50_000,
      currency: 'NGN',
      card: { number: TEST_CARDS.otpOnly, cvv: '123', expiryMonth: '12', expiryYear: '29' },
      customer: { name: 'Ada', email: 'ada@example.com' },
      webhookGraceMs: 2_000,
    });
    expect(
      (
        await waitForState(
          () => getCardPaymentState(s.starters, ref),
          (st) => st.status === 'awaiting_otp',
        )
      ).status,
    ).toBe('awaiting_otp');

    await server!.stop();
    // Down for 25 s: longer than the SDK's own gRPC retries (about 20 s) last.
    const back = new Promise<void>((resolve, reject) =>
      setTimeout(() => start().then((srv) => ((server = srv), resolve()), reject), 25_000),
    );
    const [state, next] = await Promise.all([
      getCardPaymentState(s.starters, ref),
      submitOtp(s.starters, ref, SANDBOX_OTP),
      back,
    ]);
    expect(state.status).toMatch(/^(awaiting_otp|confirming|success)$/);
    expect(next.status).toMatch(/^(confirming|success)$/);
    await expect(waitFinal(s, ref)).resolves.toBe('success');
  });
});

/** The payment's final status (at the deadline, the status it is still in, for the test's assertion). */
async function waitFinal(s: RunningServices, ref: string): Promise<string> {
  const st = await eventually(
    () => getCardPaymentState(s.starters, ref),
    (st) => ['success', 'failed', 'expired', 'outcome_unknown'].includes(st.status),
    { attempts: 120, intervalMs: 250, returnLastOnTimeout: true },
  );
  return st.status;
}
