// `npm run replay -- --namespace`'s path: recent executions of a workflow type listed in a namespace
// (visibility), their histories downloaded, replayed against the current code, and saved as fixtures.
// The worker registers the event hand-over as a production worker does: the inbox emits
// webhook.unmatched, and without it the SDK leaves a history that does not replay (time-skipping.ts).
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { downloadHistories, replayAll, summarise, readHistoryFile, workflowTypeOf } from '../../src/workers/replay';
import { releaseUnmatchedSignal } from '../../src/workflows/webhook-inbox';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createLogger } from '../../src/logging/logger';
import { LogCapture, testConfig, withWorker, workflowBundle } from '../support/stack';
import { chargeSuccessfulEvent, signalUnmatchedWebhook } from '../support/flow-inputs';
import { waitForState } from '../../src/starters/payment-common';
import { withEventHandOver } from '../support/time-skipping';

jest.setTimeout(90_000);
installTemporalRuntime(createLogger({ destination: new LogCapture() }));

describe("`npm run replay -- --namespace`'s path", () => {
  it('downloads recent executions of a workflow type from the namespace, replays them, and saves them as fixtures', async () => {
    const config = testConfig();
    const since = new Date(Date.now() - 60_000);
    const ids: string[] = [];
    await withWorker(
      config,
      { activities: withEventHandOver({}), workflowBundle: await workflowBundle() },
      async (client) => {
        for (let i = 0; i < 2; i++) {
          const h = await signalUnmatchedWebhook(
            client,
            config.temporal.taskQueue,
            chargeSuccessfulEvent(`ns-replay-${randomUUID()}`),
          );
          await h.signal(releaseUnmatchedSignal);
          await h.result();
          ids.push(h.workflowId);
        }
        // Visibility catches up shortly after the runs close.
        const query = `WorkflowType = 'unmatchedPaymentWebhookWorkflow' AND TaskQueue = '${config.temporal.taskQueue}'`;
        await waitForState(
          async () => {
            let n = 0;
            for await (const _ of client.workflow.list({ query })) n++;
            return n;
          },
          (n) => n >= 2,
          { timeoutMs: 30_000 },
        );

        const saveDir = mkdtempSync(join(tmpdir(), 'payflow-replay-'));
        const targets = downloadHistories(client, {
          workflowTypes: ['unmatchedPaymentWebhookWorkflow'],
          perType: 50,
          since,
          saveDir,
        });
        const outcomes = await replayAll(targets, {
          encryption: config.encryption,
          workflowBundle: await workflowBundle(),
        });
        for (const id of ids) expect(outcomes.some((o) => o.name.startsWith(`${id}/`))).toBe(true);
        expect(outcomes.filter((o) => o.error)).toEqual([]);
        expect(summarise(outcomes, ['unmatchedPaymentWebhookWorkflow'])).toEqual([
          { workflowType: 'unmatchedPaymentWebhookWorkflow', replayed: outcomes.length, failed: 0 },
        ]);
        const saved = readdirSync(saveDir);
        expect(saved).toHaveLength(outcomes.length);
        expect(workflowTypeOf(readHistoryFile(join(saveDir, saved[0])))).toBe('unmatchedPaymentWebhookWorkflow');
      },
    );
  });
});
