// Makes test/replay/histories/recurring-plan-notify-before-events.json: a recurring plan whose
// input carried `notify` (for its charges) and that ended before the plan emitted events of its
// own (recurring.*, patch 'recurring-plan-events', docs/operations.md). Before that change,
// `notify` changed nothing in a plan's own history but the inputs it passed to its charges, so the
// history is recurring-plan-cancelled.json (recorded by checkout-recurring-e2e) with `notify` added
// to the plan's input and to each charge's input, re-encrypted with the dev key. Replayed against
// the current code it must take the old branch (no emission); without the patch it would not
// replay. Run: `npx tsx test/replay/make-recurring-notify-history.ts`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Payload } from '@temporalio/common';
import { defaultPayloadConverter } from '@temporalio/common';
import { loadConfig } from '../../src/config/config';
import { createDataConverter } from '../../src/codec/data-converter';
import { HISTORIES_DIR } from '../support/replay';

export const NOTIFY_BEFORE_EVENTS = {
  source: 'recurring-plan-cancelled',
  name: 'recurring-plan-notify-before-events',
  url: 'https://merchant.example/events',
} as const;

type JsonPayload = { metadata: Record<string, string>; data: string };
const codec = createDataConverter(loadConfig({}).encryption).payloadCodecs![0];

async function decode(p: JsonPayload): Promise<unknown> {
  const payload: Payload = {
    metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(p.data, 'base64'),
  };
  const [plain] = await codec.decode([payload]);
  return defaultPayloadConverter.fromPayload(plain);
}

async function encode(value: unknown): Promise<JsonPayload> {
  const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(value)]);
  return {
    metadata: Object.fromEntries(
      Object.entries(sealed.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: Buffer.from(sealed.data!).toString('base64'),
  };
}

/** The first payload (the input) with `notify` added. */
async function withNotify(input: { payloads: JsonPayload[] }): Promise<void> {
  const value = (await decode(input.payloads[0])) as Record<string, unknown>;
  input.payloads[0] = await encode({ ...value, notify: { url: NOTIFY_BEFORE_EVENTS.url } });
}

async function main(): Promise<void> {
  const history = JSON.parse(readFileSync(join(HISTORIES_DIR, `${NOTIFY_BEFORE_EVENTS.source}.json`), 'utf8'));
  for (const e of history.events) {
    const input =
      e.workflowExecutionStartedEventAttributes?.input ?? e.startChildWorkflowExecutionInitiatedEventAttributes?.input;
    if (input) await withNotify(input);
  }
  writeFileSync(join(HISTORIES_DIR, `${NOTIFY_BEFORE_EVENTS.name}.json`), JSON.stringify(history, null, 1));
}

if (require.main === module) void main();
