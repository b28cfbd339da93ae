// Recorded mandate histories replay against the current workflow code (both recorded by
// test/mandates/mandate-e2e.test.ts when missing, or with RECORD_HISTORIES=1):
// - mandate-variable-lifecycle: create, wrong OTP, approval, idempotent debits, cancel;
// - mandate-variable-d3-faults: D3 answers lost after and before processing and a 503, settled by
//   verify on the debit's reference and resent with the same reference, then the balance spent;
// - mandate-fixed-scheduled-d3: a FIXED mandate recorded before the patch `mandate-fixed-observed`
//   (by a one-off run of test/mandates/fixed-service.ts's model; it cannot be recorded again, since
//   new executions observe): it sent each date's D3 from its timers, and must still do so on replay.
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

  it('replays a FIXED mandate recorded before it observed the service: its three D3s, no patch marker', async () => {
    const text = readFileSync(join(HISTORIES_DIR, 'mandate-fixed-scheduled-d3.json'), 'utf8');
    expect(text).not.toContain(Buffer.from('"mandate-fixed-observed"').toString('base64'));
    expect(text.match(/"activityType": \{\n\s*"name": "debitMandate"/g)).toHaveLength(3);
    await expect(replayHistory('mandate-fixed-scheduled-d3')).resolves.toBeUndefined();
  });
});
