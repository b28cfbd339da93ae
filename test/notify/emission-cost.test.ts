// Emitting a merchant event costs the flow at most one history event and no extra workflow task.
// Without a target of its own, on a deployment without NOTIFY_URL, a flow asks once (the patch's
// marker and search attribute, one local activity's marker) and then emits nothing more, however
// many events it has. The alternative (a child delivery workflow, ABANDON) costs
// more: it is measured here too, which is why emission is a local activity (docs/events.md).
import { temporal } from '@temporalio/proto';
import { createMerchantEventDeliveryActivities } from '../../src/activities/merchant-event-delivery';
import type { ActivityDeps } from '../../src/activities/deps';
import { merchantEventId, newNotifySecret } from '../../src/notify';
import { quietLogger } from '../support/stack';
import { runWithWorker, useTimeSkippingEnv } from '../support/time-skipping';

const FIXTURE = require.resolve('../fixtures/merchant-event-emission-workflows');
const { EventType } = temporal.api.enums.v1;
const env = useTimeSkippingEnv({ quietRuntime: true });

interface Cost {
  id: string;
  events: number;
  tasks: number;
  types: string[];
}

async function cost(workflowType: string, args: unknown[], taskQueueOf: { q?: string }): Promise<Cost> {
  const id = `${workflowType}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const handle = await env.client.workflow.start(workflowType, { workflowId: id, taskQueue: taskQueueOf.q!, args });
  await handle.result();
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  return {
    id,
    events: events.length,
    tasks: events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length,
    types: events.map((e) => EventType[e.eventType ?? 0]),
  };
}

describe('what one event costs a flow', () => {
  it('no target and no NOTIFY_URL: two markers once; a local activity: one marker, no extra task; a child workflow: more', async () => {
    const where: { q?: string } = {};
    const deps = {
      logger: quietLogger(),
      config: { notify: { secret: newNotifySecret(), retryForMs: 60_000 }, temporal: { taskQueue: '' } },
      temporal: env.client,
    } as unknown as ActivityDeps;
    const activities = createMerchantEventDeliveryActivities(deps);
    // The delivery's own endpoint is irrelevant here: nothing listens, its workflow is terminated.
    const url = 'http://127.0.0.1:9/events';
    const measured = await runWithWorker(
      env,
      activities,
      'notify-cost',
      async (q) => {
        where.q = q;
        (deps.config.temporal as { taskQueue: string }).taskQueue = q;
        return {
          none: await cost('emitNothingWorkflow', [], where),
          noTarget: await cost('emitWithoutTargetWorkflow', [], where),
          noTargetThrice: await cost('emitThriceWithoutTargetWorkflow', [], where),
          local: await cost('emitByLocalActivityWorkflow', [url], where),
          child: await cost('emitByChildWorkflow', [url], where),
        };
      },
      FIXTURE,
    );
    // Stop the deliveries the measurement started.
    for (const m of [measured.local, measured.child])
      await env.client.workflow.getHandle(merchantEventId(m.id, 'payment.succeeded')).terminate('measured');

    // The patch (its marker and TemporalChangeVersion) and the emission's answer (not-configured):
    // no delivery, no extra task.
    expect(measured.noTarget.types.filter((t) => !measured.none.types.includes(t))).toEqual([
      'EVENT_TYPE_MARKER_RECORDED',
      'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
      'EVENT_TYPE_MARKER_RECORDED',
    ]);
    expect(measured.noTarget.tasks).toBe(measured.none.tasks);
    expect(measured.noTargetThrice.types).toEqual(measured.noTarget.types);
    await expect(
      env.client.workflow.getHandle(merchantEventId(measured.noTarget.id, 'payment.succeeded')).describe(),
    ).rejects.toThrow();
    expect(measured.local.events - measured.none.events).toBe(1);
    expect(measured.local.types).toContain('EVENT_TYPE_MARKER_RECORDED');
    expect(measured.local.tasks).toBe(measured.none.tasks);
    expect(measured.child.events - measured.none.events).toBeGreaterThan(measured.local.events - measured.none.events);
    expect(measured.child.tasks).toBeGreaterThan(measured.local.tasks);
    // The figures docs/events.md quotes.
    console.log(
      `emission cost (events/tasks): none ${measured.none.events}/${measured.none.tasks}, local activity ${measured.local.events}/${measured.local.tasks}, child ${measured.child.events}/${measured.child.tasks}`,
    );
  }, 120_000);
});
