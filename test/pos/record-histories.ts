// Records the POS histories the replay tests use (the vending ones: test/vending/vending-e2e.test.ts):
//   npx tsx test/pos/record-histories.ts        (RECORD_HISTORIES=1 is implied)
// Starts its own dev server unless TEMPORAL_TEST_ADDRESS is set. Runs the real workflows and
// activities over a scripted API client, so every decision path below is deterministic.
// Needs the claim-check PostgreSQL in CLAIM_CHECK_TEST_DATABASE_URL (the POS card read is sealed
// by the real starter). The sale is recorded as pos-txn-sealed-*, the remote request as
// pos-remote-locked-*, its lock as pos-terminal-lock. RECORD_ONLY=pos-remote,pos-terminal-lock
// records only names with those prefixes (and needs no claim-check database);
// RECORD_ONLY=pos-txn,pos-remote,pos-terminal-lock records every POS history.
import { randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { createLogger } from '../../src/logging/logger';
import { cancelPosRemoteSignal, posRemoteStateQuery } from '../../src/shared/pos-remote';
import { posTerminalLockWorkflowId } from '../../src/shared/pos-terminal-lock';
import { startDevServer } from '../../src/stack/temporal-dev-server';
import { createTemporalClient } from '../../src/temporal/client';
import { createPaymentsWorker } from '../../src/workers/worker';
import type { posRemoteRequestWorkflow } from '../../src/workflows/pos-remote';
import { testConfig, workflowBundle } from '../support/stack';
import { ScriptedApi } from './fixtures/scripted-api';
import { POS_HISTORIES } from './fixtures/histories';
import { recordHistoryTo } from '../support/replay';
import { cardInput, unusedClaimCheck } from './helpers';
import { openClaimCheck, openPaymentsClient } from '../../src/starters/connect';
import { startPosTransaction } from '../../src/starters/pos-terminal';

async function main(): Promise<void> {
  process.env.RECORD_HISTORIES = '1';
  const dev = process.env.TEMPORAL_TEST_ADDRESS ? undefined : await startDevServer({ uiPort: null });
  if (dev) process.env.TEMPORAL_TEST_ADDRESS = dev.address;
  try {
    await record();
  } finally {
    await dev?.stop();
  }
}

async function record(): Promise<void> {
  const config = testConfig();
  const scripted = new ScriptedApi();
  const only = process.env.RECORD_ONLY?.split(',').filter(Boolean);
  const want = (name: string) => !only || only.some((p) => name.startsWith(p));
  const opened = want('pos-txn') ? await openClaimCheck(config) : undefined;
  const claimCheck = opened ?? unusedClaimCheck;
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await createPaymentsWorker({
    ...config.temporal,
    encryption: config.encryption,
    connection,
    activities: createActivities({ api: scripted.api, logger: createLogger({ level: 'warn' }), config, claimCheck }),
    workflowBundle: await workflowBundle(),
  });
  const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  const tq = config.temporal.taskQueue;
  // The starters' context; its API client is never called here (the worker's activities use the scripted one).
  const ctx = { client, taskQueue: tq, claimCheck, api: openPaymentsClient(config) };
  const id = () => randomUUID().slice(0, 8);
  await worker.runUntil(async () => {
    if (want('pos-txn')) {
      // F3 timeout → F4 404 → F3 again → 00
      const r1 = `rp-${id()}`;
      scripted.f3.set(r1, ['timeout', { code: '00' }]);
      scripted.f4.set(r1, ['not_found']);
      const h1 = await startPosTransaction(
        ctx,
        cardInput(r1, { options: { requerySettleDelay: '100ms', retryBackoff: '100ms' } }),
      );
      await h1.result();
      await recordHistoryTo(POS_HISTORIES, h1, 'pos-txn-sealed-timeout-404-retry-approved');
      // F3 96 → F4 found 00
      const r2 = `rp-${id()}`;
      scripted.f3.set(r2, [{ code: '96' }]);
      scripted.f4.set(r2, [{ code: '00' }]);
      const h2 = await startPosTransaction(ctx, cardInput(r2));
      await h2.result();
      await recordHistoryTo(POS_HISTORIES, h2, 'pos-txn-sealed-96-requery-found');
    }
    const startRemote = (t: string, options: Record<string, unknown>) =>
      client.workflow.start<typeof posRemoteRequestWorkflow>('posRemoteRequestWorkflow', {
        workflowId: `pos-remote-${t}`,
        taskQueue: tq,
        args: [{ reference: t, terminal_id: t, amount: 150000, options }],
      });
    if (want('pos-remote')) {
      // E2 pending ×3 → success
      const t3 = `T${id()}`;
      scripted.e2.set(`RR-${t3}`, ['pending', 'pending', 'pending', 'success']);
      const h3 = await startRemote(t3, { pollIntervalMs: 50 });
      await h3.result();
      await recordHistoryTo(POS_HISTORIES, h3, 'pos-remote-locked-success');
      // E1's answer lost → found in A6 → success
      const t6 = `T${id()}`;
      scripted.e1Drop.add(t6);
      scripted.e2.set(`RR-${t6}`, ['pending', 'success']);
      const h6 = await startRemote(t6, { pollIntervalMs: 50, searchInterval: '100ms' });
      await h6.result();
      await recordHistoryTo(POS_HISTORIES, h6, 'pos-remote-locked-lost-e1-found');
      // cancel → watched → the payer approves after the cancel
      const t4 = `T${id()}`;
      scripted.e2.set(`RR-${t4}`, [...Array.from<'pending'>({ length: 30 }).fill('pending'), 'success']);
      const h4 = await startRemote(t4, { pollIntervalMs: 50, heartbeatTimeout: '2s' });
      while ((await h4.query(posRemoteStateQuery)).status !== 'pending') await new Promise((r) => setTimeout(r, 50));
      await h4.signal(cancelPosRemoteSignal, { reason: 'record' });
      await h4.result();
      await recordHistoryTo(POS_HISTORIES, h4, 'pos-remote-locked-success-after-cancel');
      // The terminal lock of t3 (still running, idle after its holder released)
      if (want('pos-terminal-lock'))
        await recordHistoryTo(
          POS_HISTORIES,
          client.workflow.getHandle(posTerminalLockWorkflowId(t3, tq)),
          'pos-terminal-lock',
        );
    }
  });
  console.log(scripted.log.join('\n'));
  await client.connection.close();
  await opened?.close();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
