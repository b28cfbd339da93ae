// Recorded mandate histories replay against the current workflow code (both recorded by
// test/mandates/mandate-e2e.test.ts when missing, or with RECORD_HISTORIES=1):
// - mandate-variable-lifecycle: create, wrong OTP, approval, idempotent debits, cancel;
// - mandate-variable-d3-faults: D3 answers lost after and before processing and a 503, settled by
//   verify on the debit's reference and resent with the same reference, then the balance spent;
// - mandate-fixed-scheduled-d3: a FIXED mandate recorded before the patch `mandate-fixed-observed`
//   (by a one-off run of test/mandates/fixed-service.ts's model; it cannot be recorded again, since
//   new executions observe): it sent each date's D3 from its timers, and must still do so on replay.
// - mandate-otp-after-query-advance: the cluster chaos run's mandate X1500mand353, recorded by the
//   SDK's query fault (docs/sdk-update-ordering.md): the holder's OTP accepted after the creation's
//   result, its upsert and its OTP timer, live, in one task; on replay the OTP comes first. It
//   replays because the OTP handlers are registered only once the flow waits for the OTP.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HISTORIES_DIR, replayHistory } from '../support/replay';

describe('recorded mandate histories replay against the current workflow code', () => {
  it('replays the variable-mandate lifecycle with idempotent debits', async () => {
    await expect(replayHistory('mandate-variable-lifecycle')).resolves.toBeUndefined();
  });

  it('replays lost D3 answers settled by verify and resends', async () => {
    await expect(replayHistory('mandate-variable-d3-faults')).resolves.toBeUndefined();
  });

  it('replays the mandate the SDK query fault recorded: the OTP accepted after the upsert and timer of the same task', async () => {
    const history = JSON.parse(readFileSync(join(HISTORIES_DIR, 'mandate-otp-after-query-advance.json'), 'utf8')) as {
      events: { eventId: string; eventType: string }[];
    };
    expect(history.events.slice(40, 45).map((e) => e.eventType)).toEqual([
      'EVENT_TYPE_WORKFLOW_TASK_COMPLETED',
      'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
      'EVENT_TYPE_TIMER_STARTED',
      'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
      'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
    ]);
    await expect(replayHistory('mandate-otp-after-query-advance')).resolves.toBeUndefined();
  });

  it('replays a FIXED mandate recorded before it observed the service: its three D3s, no patch marker', async () => {
    const text = readFileSync(join(HISTORIES_DIR, 'mandate-fixed-scheduled-d3.json'), 'utf8');
    expect(text).not.toContain(Buffer.from('"mandate-fixed-observed"').toString('base64'));
    expect(text.match(/"activityType": \{\n\s*"name": "debitMandate"/g)).toHaveLength(3);
    await expect(replayHistory('mandate-fixed-scheduled-d3')).resolves.toBeUndefined();
  });
});
