// The recurring plan's own events (recurring.*) came after plans whose input already carried
// `notify` (for their charges): such a plan, still open when the change is deployed, must replay
// without an emission its history never had. The patch 'recurring-plan-events' keeps the old
// branch for it (docs/operations.md, docs/events.md "Versioning"). The fixture is made by
// ./make-recurring-notify-history.ts from a recorded plan.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { loadConfig } from '../../src/config/config';
import { createDataConverter } from '../../src/codec/data-converter';
import { HISTORIES_DIR, replayHistoryFrom } from '../support/replay';
import { NOTIFY_BEFORE_EVENTS } from './make-recurring-notify-history';

jest.setTimeout(60_000);

type JsonPayload = { metadata: Record<string, string>; data: string };
const history = JSON.parse(readFileSync(join(HISTORIES_DIR, `${NOTIFY_BEFORE_EVENTS.name}.json`), 'utf8'));

async function planInput(): Promise<Record<string, unknown>> {
  const p: JsonPayload = history.events[0].workflowExecutionStartedEventAttributes.input.payloads[0];
  const codec = createDataConverter(loadConfig({}).encryption).payloadCodecs![0];
  const [plain] = await codec.decode([
    {
      metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      data: Buffer.from(p.data, 'base64'),
    } as Payload,
  ]);
  return defaultPayloadConverter.fromPayload(plain);
}

it('the fixture is a plan with a notify target that ended (cancelled) without a plan event', async () => {
  expect(await planInput()).toMatchObject({ notify: { url: NOTIFY_BEFORE_EVENTS.url } });
  const types = history.events.map((e: { eventType: string }) => e.eventType);
  expect(types.at(-1)).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
  expect(types).not.toContain('EVENT_TYPE_MARKER_RECORDED');
});

it('replays against the current code: the patch keeps the old branch, no emission is asked for', async () => {
  await expect(replayHistoryFrom(HISTORIES_DIR, NOTIFY_BEFORE_EVENTS.name)).resolves.toBeUndefined();
});
