// End to end on the real dev server: a workflow through the project's worker, with the
// project's encrypted data converter, and its history read back from the server.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createFoundationActivities } from '../fixtures/foundation-activities';
import { LogCapture, testConfig, withWorker, workflowBundle } from '../support/stack';
import type { cardEchoWorkflow, failingWorkflow } from '../fixtures/foundation-workflows';

const capture = new LogCapture();
const logger = createLogger({ destination: capture, level: 'info' });
installTemporalRuntime(logger);

const PAN = '4242424242424242';

describe('a workflow on the dev server, through the encrypting data converter', () => {
  const config = testConfig();

  /** Runs `fn` while a worker of the foundation fixtures (test/fixtures/foundation-*) runs. */
  const withFoundationWorker = async <T>(fn: (client: Client) => Promise<T>): Promise<T> =>
    withWorker(
      config,
      {
        activities: createFoundationActivities(),
        workflowBundle: await workflowBundle(require.resolve('../fixtures/foundation-workflows')),
      },
      fn,
    );

  it('runs a workflow and activity through the worker; the history holds only ciphertext', async () => {
    const workflowId = `echo-${randomUUID()}`;
    await withFoundationWorker(async (client) => {
      const result = await client.workflow.execute<typeof cardEchoWorkflow>('cardEchoWorkflow', {
        workflowId,
        taskQueue: config.temporal.taskQueue,
        args: [{ cardNumber: PAN, amount: 10000 }],
      });
      expect(result).toBe(`card ${PAN} charged 10000`);

      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      const raw = JSON.stringify(history);
      expect(raw.length).toBeGreaterThan(1000);
      const b64 = Buffer.from(PAN).toString('base64');
      expect(raw).not.toContain(PAN);
      expect(raw).not.toContain(b64.slice(0, 16));
      // Every payload in the history is encrypted.
      const encodings = [...raw.matchAll(/"encoding":"([^"]+)"/g)].map((m) => Buffer.from(m[1], 'base64').toString());
      expect(encodings.length).toBeGreaterThan(0);
      expect(new Set(encodings)).toEqual(new Set(['binary/encrypted']));
    });

    // SDK logs went through pino, carry the workflow id, and redact the PAN.
    const wfLine = capture.records.find((r) => r.msg === 'echo workflow started');
    expect(wfLine).toMatchObject({ workflowId, amount: 10000 });
    expect(wfLine?.runId).toEqual(expect.any(String));
    const actLine = capture.records.find((r) => r.msg === 'describing card');
    expect(actLine).toMatchObject({ workflowId });
    expect(capture.text).not.toContain(PAN);
  });

  it('encodes failure messages: the server never sees them in plaintext', async () => {
    const workflowId = `fail-${randomUUID()}`;
    const secretDetail = `bvn-22212345678-${randomUUID()}`;
    await withFoundationWorker(async (client) => {
      const err = await client.workflow
        .execute<typeof failingWorkflow>('failingWorkflow', {
          workflowId,
          taskQueue: config.temporal.taskQueue,
          args: [secretDetail],
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      // The client decodes the message for us…
      expect(((err as WorkflowFailedError).cause as Error).message).toBe(`declined: ${secretDetail}`);
      // …but the stored history has it only encrypted.
      const raw = JSON.stringify(await client.workflow.getHandle(workflowId).fetchHistory());
      expect(raw).toContain('workflowExecutionFailedEventAttributes');
      expect(raw).not.toContain(secretDetail);
      expect(raw).toContain('Encoded failure');
    });
  });
});
