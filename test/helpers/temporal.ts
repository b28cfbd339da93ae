// Test helpers: config aimed at the suite's dev server, a once-per-process workflow bundle,
// and a log capture stream.
import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { loadConfig, type AppConfig } from '../../src/config/config';
import { WORKFLOWS_PATH } from '../../src/workers/worker';
import { FAILURE_CONVERTER_PATH } from '../../src/codec/data-converter';

export function devServerAddress(): string {
  const address = process.env.TEMPORAL_TEST_ADDRESS;
  if (!address) throw new Error('TEMPORAL_TEST_ADDRESS is not set: jest globalSetup starts the dev server');
  return address;
}

/** Config for a test: the suite's dev server, a task queue of its own, free ports. */
export function testConfig(env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    TEMPORAL_ADDRESS: devServerAddress(),
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    SANDBOX_PORT: '0',
    WEBHOOK_PORT: '0',
    CODEC_PORT: '0',
    LOG_LEVEL: 'warn',
    PAYMENTS_TIMEOUT_MS: '5000',
    ...env,
  });
}

const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>();

/** Bundles a workflows module once per jest worker process (webpack takes seconds). */
export function workflowBundle(workflowsPath: string = WORKFLOWS_PATH): Promise<WorkflowBundleWithSourceMap> {
  let b = bundles.get(workflowsPath);
  if (!b) {
    b = bundleWorkflowCode({ workflowsPath, failureConverterPath: FAILURE_CONVERTER_PATH, logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } });
    bundles.set(workflowsPath, b);
  }
  return b;
}

/** A writable that collects pino's JSON lines. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    cb();
  }
  get records(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
  get text(): string {
    return this.lines.join('\n');
  }
}
