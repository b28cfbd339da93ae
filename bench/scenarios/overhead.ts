// overhead: our vend and card flows against the baseline's hand-written workflows making the same
// HTTP calls, in interleaved rounds (ours first in even rounds, the baseline first in odd ones).
// Also per flow: worker CPU, history events, workflow tasks and search-attribute upserts.
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { closedLoop, topErrors } from '../lib/load';
import { interleave, row, summarize, throughput, type Row } from '../lib/stats';
import { meterStackCpu, noCpu, stackCpuRows, type SideProcesses, type StackCpu } from '../lib/stack-cpu';
import type { BenchStack } from '../lib/stack';
import { baselineCard, baselineVend, oursCard, oursVend } from './flows';
import type { ScenarioResult } from './types';

interface Side {
  latencies: number[];
  wallMs: number;
  flows: number;
  /** The whole stack's CPU while this side ran (bench/lib/stack-cpu.ts). */
  cpu: StackCpu;
  errors: string[];
}
const empty = (): Side => ({ latencies: [], wallMs: 0, flows: 0, cpu: noCpu(), errors: [] });

async function batch(
  stack: BenchStack,
  procs: SideProcesses,
  side: Side,
  n: number,
  concurrency: number,
  flow: () => Promise<unknown>,
) {
  const r = await meterStackCpu(stack, procs, side.cpu, () => closedLoop(n, concurrency, flow));
  side.latencies.push(...r.latencies);
  side.wallMs += r.wallMs;
  side.flows += r.latencies.length;
  side.errors.push(...r.errors);
}

export interface HistoryShape {
  events: number;
  tasks: number;
  failedTasks: number;
  upserts: number;
  markers: number;
  activities: number;
  signals: number;
}

/** Flows whose histories make a scenario's mean history shape. */
const SHAPE_SAMPLE = 30;

/** The mean shape of some finished flows' histories. */
export async function meanShape(handles: WorkflowHandle[]): Promise<HistoryShape> {
  const shapes = await Promise.all(handles.map(historyShape));
  const mean = (k: keyof HistoryShape) => shapes.reduce((a, s) => a + s[k], 0) / Math.max(shapes.length, 1);
  return {
    events: mean('events'),
    tasks: mean('tasks'),
    failedTasks: mean('failedTasks'),
    upserts: mean('upserts'),
    markers: mean('markers'),
    activities: mean('activities'),
    signals: mean('signals'),
  };
}

/** Events, workflow tasks (completed, failed), search-attribute upserts, markers, activities and signals in one finished flow's history. */
export async function historyShape(handle: WorkflowHandle): Promise<HistoryShape> {
  const history = await handle.fetchHistory();
  const types = (history.events ?? []).map((e) => temporal.api.enums.v1.EventType[e.eventType ?? 0]);
  const count = (t: string) => types.filter((x) => x === t).length;
  return {
    events: types.length,
    tasks: count('EVENT_TYPE_WORKFLOW_TASK_COMPLETED'),
    failedTasks: count('EVENT_TYPE_WORKFLOW_TASK_FAILED'),
    upserts: count('EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES'),
    markers: count('EVENT_TYPE_MARKER_RECORDED'),
    activities: count('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED'),
    signals: count('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED'),
  };
}

export async function overhead(
  stack: BenchStack,
  o: { rounds: number; flowsPerRound: number; concurrency: number },
  log: (s: string) => void,
): Promise<ScenarioResult> {
  const rows: Row[] = [];
  const distributions: ScenarioResult['distributions'] = [];
  for (const kind of ['vend', 'card'] as const) {
    const ours = empty();
    const base = empty();
    // The history shape is averaged over the last flows of the measured rounds (under load, where
    // a webhook can land in a flow's last workflow task), not taken from one flow run alone.
    const sampled = { ours: [] as string[], base: [] as string[] };
    const keep = (ids: string[]) => (id: string) => {
      ids.push(id);
      if (ids.length > SHAPE_SAMPLE) ids.shift();
    };
    const runOurs = () =>
      batch(stack, { worker: stack.ours, receiver: stack.receiver }, ours, o.flowsPerRound, o.concurrency, () =>
        (kind === 'vend' ? oursVend(stack) : oursCard(stack)).then(keep(sampled.ours)),
      );
    const runBase = () =>
      batch(
        stack,
        { worker: stack.baseline, receiver: stack.baselineReceiver },
        base,
        o.flowsPerRound,
        o.concurrency,
        () => (kind === 'vend' ? baselineVend(stack) : baselineCard(stack)).then(keep(sampled.base)),
      );
    // One unmeasured warm-up batch each (bundle loaded, JIT, connections).
    await closedLoop(Math.min(o.concurrency, 10), o.concurrency, () =>
      kind === 'vend' ? oursVend(stack) : oursCard(stack),
    );
    await closedLoop(Math.min(o.concurrency, 10), o.concurrency, () =>
      kind === 'vend' ? baselineVend(stack) : baselineCard(stack),
    );
    for (let round = 0; round < o.rounds; round++) {
      const [first, second] = interleave(round, runOurs, runBase);
      await first();
      await second();
      log(
        `  overhead ${kind} round ${round + 1}/${o.rounds}: ours ${throughput(ours.flows, ours.wallMs).toFixed(1)} flows/s, baseline ${throughput(base.flows, base.wallMs).toFixed(1)} flows/s so far`,
      );
    }
    const so = summarize(ours.latencies);
    const sb = summarize(base.latencies);
    const note = [...topErrors(ours.errors), ...topErrors(base.errors)].join(' | ') || undefined;
    rows.push(
      row(
        'overhead',
        `${kind} throughput`,
        'flows/s',
        throughput(ours.flows, ours.wallMs),
        throughput(base.flows, base.wallMs),
        { op: '>=', value: kind === 'card' ? 0.95 : 1.0 },
        note,
      ),
      row('overhead', `${kind} p50 latency`, 'ms', so.p50, sb.p50, { op: '<=', value: kind === 'card' ? 1.05 : 1.0 }),
      row('overhead', `${kind} p99 latency`, 'ms', so.p99, sb.p99),
      ...stackCpuRows('overhead', kind, ours, base),
      row('overhead', `${kind} failed flows`, 'flows', ours.errors.length, base.errors.length),
    );
    const so2 = await meanShape(sampled.ours.map((id) => stack.starters.client.workflow.getHandle(id)));
    const sb2 = await meanShape(sampled.base.map((id) => stack.plain.workflow.getHandle(id)));
    rows.push(
      row('overhead', `${kind} history events per flow`, 'events', so2.events, sb2.events),
      row('overhead', `${kind} workflow tasks per flow`, 'tasks', so2.tasks, sb2.tasks),
      row('overhead', `${kind} failed workflow tasks per flow`, 'tasks', so2.failedTasks, sb2.failedTasks),
      row('overhead', `${kind} search-attribute upserts per flow`, 'upserts', so2.upserts, sb2.upserts),
      row('overhead', `${kind} markers per flow`, 'markers', so2.markers, sb2.markers),
      row('overhead', `${kind} activities per flow`, 'activities', so2.activities, sb2.activities),
      row('overhead', `${kind} signals per flow`, 'signals', so2.signals, sb2.signals),
    );
    distributions.push(
      { label: `${kind}: ours`, latencies: ours.latencies },
      { label: `${kind}: baseline`, latencies: base.latencies },
    );
  }
  return { rows, distributions };
}
