// bench/lib/history-cost.ts: the Temporal Cloud Actions and bytes docs/capacity.md is built on. A
// rule counted wrong there misprices every payment; the tier arithmetic misprices every month.
import { temporal } from '@temporalio/proto';
import { addCosts, cloudActionsUsd, historyCost, payloadBytes } from '../../bench/lib/history-cost';
import { byGroup, cpuSpent } from '../../bench/capacity';

const T = temporal.api.enums.v1.EventType;
const payload = (text: string) => ({
  metadata: { encoding: new TextEncoder().encode('json/plain') },
  data: new TextEncoder().encode(text),
});
const upsert = (...names: string[]) => ({
  eventType: T.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
  upsertWorkflowSearchAttributesEventAttributes: {
    searchAttributes: { indexedFields: Object.fromEntries(names.map((n) => [n, payload('"x"')])) },
  },
});

describe('historyCost', () => {
  // Event ids as plain numbers (protobufjs takes them; its types want Long).
  const history = {
    events: [
      {
        eventId: 1,
        eventType: T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
        workflowExecutionStartedEventAttributes: { input: { payloads: [payload('{"amount":250000}')] } },
      },
      { eventId: 2, eventType: T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED },
      {
        eventId: 5,
        eventType: T.EVENT_TYPE_MARKER_RECORDED,
        markerRecordedEventAttributes: { workflowTaskCompletedEventId: 4 },
      },
      {
        eventId: 6,
        eventType: T.EVENT_TYPE_MARKER_RECORDED,
        markerRecordedEventAttributes: { workflowTaskCompletedEventId: 4 },
      },
      { eventId: 7, ...upsert('PaymentStatus', 'TemporalChangeVersion') },
      { eventId: 8, ...upsert('TemporalChangeVersion') },
      { eventId: 9, eventType: T.EVENT_TYPE_ACTIVITY_TASK_STARTED, activityTaskStartedEventAttributes: { attempt: 3 } },
      { eventId: 10, eventType: T.EVENT_TYPE_TIMER_STARTED },
      { eventId: 11, eventType: T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED },
      { eventId: 12, eventType: T.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED },
      {
        eventId: 14,
        eventType: T.EVENT_TYPE_MARKER_RECORDED,
        markerRecordedEventAttributes: { workflowTaskCompletedEventId: 13 },
      },
    ],
  } as unknown as temporal.api.history.v1.IHistory;

  it('counts Actions by the pricing rules: markers once per workflow task, every activity attempt, no patch-only upsert', () => {
    const c = historyCost(history);
    expect(c.events).toBe(11);
    expect(c.actionsBy).toMatchObject({
      workflowStarted: 1,
      markerTask: 2,
      searchAttributeUpsert: 1,
      activityAttempt: 3,
      timerStarted: 1,
      signal: 1,
      updateAccepted: 1,
    });
    expect(c.actions).toBe(10);
    expect(c.historyBytes).toBe(temporal.api.history.v1.History.encode(history).finish().length);
  });

  it('sums payload bytes (data and metadata) wherever they sit, and adds executions up', () => {
    expect(payloadBytes([payload('abc')])).toBe(3 + 'encoding'.length + 'json/plain'.length);
    const c = historyCost(history);
    expect(addCosts([c, c])).toMatchObject({ events: 22, actions: 20, payloadBytes: 2 * c.payloadBytes });
    expect(c.payloadBytes).toBeGreaterThan('{"amount":250000}'.length);
  });
});

describe('cloudActionsUsd', () => {
  it("prices a month's Actions by the Pay-As-You-Go tiers after the included ones", () => {
    expect(cloudActionsUsd(1_000_000)).toBe(50);
    // The pricing page's own example: 11.25M Actions → 250 + 225 + 50.
    expect(cloudActionsUsd(11_250_000)).toBeCloseTo(525, 6);
    expect(cloudActionsUsd(900_000, 1_000_000)).toBe(0);
    expect(() => cloudActionsUsd(201_000_000)).toThrow(/Sales/);
  });
});

describe('capacity CPU arithmetic', () => {
  it('takes the idle rate off each process and groups them', () => {
    const spent = cpuSpent(
      { 'worker-1': 100, 'temporal-history-1': 50 },
      { 'worker-1': 400, 'temporal-history-1': 60, 'temporal-postgres': 30 },
      1000,
      { 'temporal-history-1': 0.02 },
    );
    expect(spent).toEqual({ 'worker-1': 300, 'temporal-history-1': 0, 'temporal-postgres': 30 });
    expect(byGroup({ ...spent, 'temporal-frontend': 5, sandbox: 2 })).toEqual({
      worker: 300,
      server: 5,
      postgres: 30,
      other: 2,
    });
  });
});
