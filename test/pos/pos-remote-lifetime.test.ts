// The POS remote request's 5-minute lifetime (spec, Limits) with the workflow's DEFAULT options, on
// the time-skipping server (issue #29, behaviour 2): an E2 404 after 5 minutes on the workflow clock
// ends the request expired; a 404 shortly before 5 minutes does not end it, polling goes on.
//
// The lock, E1, A6 and the final look are the real activities over a scripted API client. E2's
// polling activity is a stub that answers on the workflow clock (the test server's): each attempt
// is one E2 look at the service's scripted answer for the time elapsed since E1; a look that
// settles nothing ends the attempt with a retryable failure, so the activity's retry backoff (a
// server timer, 1 s doubling to 10 s) lets the clock skip to the next look. It applies the polling
// activity's own rule on the `expiresNotBefore` the workflow passes (a 404 before it is not expiry,
// see posRemotePollRequest and test/pos/pos-remote-workflow.test.ts): what is pinned here is the
// lifetime the workflow counts by default, from E1's answer.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { createWorkerGroup } from '../../src/workers/worker-group';
import type { PaymentsClient } from '../../src/api';
import { createPosRemoteActivities } from '../../src/activities/pos-remote';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { posRemoteWorkflowId, type PosRemotePollOutcome, type PosRemoteResult } from '../../src/shared/pos-remote';
import { LogCapture, testConfig, workflowBundle } from '../support/stack';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { unusedClaimCheck } from './helpers';

const logger = createLogger({ destination: new LogCapture(), level: 'warn' });
installTemporalRuntime(logger, 'WARN');
const config = testConfig();

const MINUTE = 60_000;
const LIFETIME_MS = 5 * MINUTE; // the spec's, and what the workflow must count by default

const env = useTimeSkippingEnv();

type Answer = 'pending' | '404' | 'success';

/** One E2 look as the stub saw it: ms since E1 on the workflow clock, the service's answer, the stub's verdict. */
interface Look {
  elapsedMs: number;
  answer: Answer;
  verdict: 'keep polling' | 'expired' | 'success';
}

/**
 * The service of one terminal: E1 records when the request was created (workflow clock); E2
 * answers `script(ms since E1)`; A6 lists nothing (no transaction record to look at after a 404).
 */
function scriptedService(script: (elapsedMs: number) => Answer) {
  let createdAt: number | undefined;
  const looks: Look[] = [];
  const expiresNotBefore: (number | undefined)[] = [];
  const api = {
    posRemote: {
      create: async (req: { terminal_id: string }) => {
        createdAt = await env.currentTimeMs();
        return { data: { request_ref: `RR-${req.terminal_id}` } };
      },
    },
    transactions: { query: async () => ({ data: [] }) },
  };
  const real = createPosRemoteActivities({
    api: api as unknown as PaymentsClient,
    logger,
    config,
    claimCheck: unusedClaimCheck,
  });
  const activities = {
    posTerminalLockAcquire: real.posTerminalLockAcquire,
    posRemoteFindRequest: real.posRemoteFindRequest,
    posRemoteCreateRequest: real.posRemoteCreateRequest,
    posRemoteLookupRecord: real.posRemoteLookupRecord,
    async posRemotePollRequest(input: {
      request_ref: string;
      expiresNotBefore?: number;
    }): Promise<PosRemotePollOutcome> {
      const now = await env.currentTimeMs();
      expiresNotBefore.push(input.expiresNotBefore);
      const elapsedMs = now - createdAt!;
      const answer = script(elapsedMs);
      const polls = looks.length + 1;
      const attempt = Context.current().info.attempt;
      if (answer === 'success') {
        looks.push({ elapsedMs, answer, verdict: 'success' });
        return {
          status: 'success',
          record: { status: 'success', id: 7, amount: 150000, response_code: '00' },
          polls,
          attempt,
        };
      }
      // The polling activity's rule: a 404 is expiry only once the lifetime the workflow gave has ended.
      if (answer === '404' && (input.expiresNotBefore === undefined || now >= input.expiresNotBefore)) {
        looks.push({ elapsedMs, answer, verdict: 'expired' });
        return { status: 'expired', polls, attempt };
      }
      looks.push({ elapsedMs, answer, verdict: 'keep polling' });
      throw ApplicationFailure.create({ type: 'StillPolling', message: `E2 answered ${answer}: polling goes on` });
    },
  };
  return { activities, looks, expiresNotBefore, createdAt: () => createdAt };
}

async function runFlow(
  service: ReturnType<typeof scriptedService>,
): Promise<{ result: PosRemoteResult; endedAt: number }> {
  const taskQueue = `pos-lifetime-${randomUUID()}`;
  const worker = await createWorkerGroup({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: service.activities,
  });
  return worker.runUntil(async () => {
    const reference = `ord-${randomUUID()}`;
    const handle = await env.client.workflow.start('posRemoteRequestWorkflow', {
      workflowId: posRemoteWorkflowId(reference),
      taskQueue,
      // No options: the workflow's defaults (the 5-minute lifetime among them).
      args: [{ reference, terminal_id: `T${randomUUID().slice(0, 8)}`, amount: 150000 }],
    });
    const result = (await handle.result()) as PosRemoteResult;
    return { result, endedAt: await env.currentTimeMs() };
  });
}

describe("the POS remote request's 5-minute lifetime with the default options", () => {
  it('an E2 404 after 5 minutes on the workflow clock ends the request expired', async () => {
    // Pending for the whole lifetime, gone (404) from 5 minutes on.
    const service = scriptedService((ms) => (ms < LIFETIME_MS ? 'pending' : '404'));
    const { result, endedAt } = await runFlow(service);

    expect(result).toMatchObject({ status: 'expired', requestRef: expect.stringMatching(/^RR-T/) });
    expect(result.record).toBeUndefined();
    // The workflow counted 5 minutes from E1 (the workflow's clock; E1's answer is a moment after the service created it).
    const expires = service.expiresNotBefore[0]!;
    expect(service.expiresNotBefore.every((e) => e === expires)).toBe(true);
    expect(expires - service.createdAt()!).toBeGreaterThanOrEqual(LIFETIME_MS);
    expect(expires - service.createdAt()!).toBeLessThan(LIFETIME_MS + 5_000);
    // A 404 after 5 minutes of pending ended it, at the first look past the lifetime the workflow
    // counts (E1's answer comes a moment after the service created the request, so a look in that
    // moment still polls on; the next is at most one 10 s backoff later).
    const last = service.looks.at(-1)!;
    expect(last).toMatchObject({ answer: '404', verdict: 'expired' });
    expect(last.elapsedMs).toBeGreaterThanOrEqual(LIFETIME_MS);
    expect(last.elapsedMs).toBeLessThan(LIFETIME_MS + 25_000);
    expect(service.looks.filter((l) => l.answer === 'pending').length).toBeGreaterThanOrEqual(10);
    expect(service.looks.every((l) => l.answer === 'pending' || l.elapsedMs >= LIFETIME_MS)).toBe(true);
    expect(endedAt - service.createdAt()!).toBeGreaterThanOrEqual(LIFETIME_MS);
  });

  it('a 404 just before 5 minutes does not end it: polling goes on and sees the approval that follows', async () => {
    // Pending, then 404 from 4 min 30 s to 4 min 55 s (a replica that lost the request, still within
    // the lifetime), then the terminal's approval.
    const from404 = LIFETIME_MS - 30_000;
    const until404 = LIFETIME_MS - 5_000;
    const service = scriptedService((ms) => (ms < from404 ? 'pending' : ms < until404 ? '404' : 'success'));
    const { result } = await runFlow(service);

    expect(result).toMatchObject({ status: 'success', record: { status: 'success', response_code: '00' } });
    const early404s = service.looks.filter((l) => l.answer === '404');
    expect(early404s.length).toBeGreaterThanOrEqual(1);
    expect(early404s.every((l) => l.elapsedMs < LIFETIME_MS && l.verdict === 'keep polling')).toBe(true);
    expect(service.looks.at(-1)).toMatchObject({ answer: 'success', verdict: 'success' });
  });
});
