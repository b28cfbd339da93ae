// pos-poll: N POS remote requests open at once, each polled (E2) by its flow's heartbeating
// activity every pollIntervalMs until the sandbox's simulated terminal completes it. Measured at
// the sandbox: the gap between consecutive E2 calls of one request, minus the configured interval
// (its lateness), and in the histories: activity timeouts (a missed heartbeat is one).
import { temporal } from '@temporalio/proto';
import { startPosRemoteRequest } from '../../src/starters/pos-remote';
import { TEST_TERMINALS } from '../../src/sandbox';
import { closedLoop, topErrors } from '../lib/load';
import { lateness, row, summarize } from '../lib/stats';
import { sandboxAdmin, type BenchStack } from '../lib/stack';
import { meterStackCpu, noCpu, stackCpuRows } from '../lib/stack-cpu';
import { uid } from './flows';
import type { ScenarioResult } from './types';

const E2 = /^\/softpos\/pos\/remote-request\/([^/]+)$/;

interface LogEntry {
  at: string;
  method: string;
  path: string;
}

export async function posPoll(
  stack: BenchStack,
  o: { requests: number; holdMs: number; pollIntervalMs: number },
  log: (s: string) => void,
): Promise<ScenarioResult> {
  const terminals = Object.values(TEST_TERMINALS)
    .filter((t) => t.status === 'active')
    .map((t) => t.terminal_id)
    .slice(-o.requests);
  if (terminals.length < o.requests)
    throw new Error(`the sandbox has ${terminals.length} active terminals, fewer than ${o.requests}`);
  // The sandbox keeps its last 5,000 requests: read the log often and keep every E2 call once.
  const seen = new Set<string>();
  const polls = new Map<string, number[]>();
  const collect = async () => {
    const entries = (await sandboxAdmin(stack, 'GET', '/requests')) as LogEntry[];
    for (const e of entries) {
      const m = e.method === 'GET' ? E2.exec(e.path) : null;
      if (!m || seen.has(`${e.at}|${e.path}`)) continue;
      seen.add(`${e.at}|${e.path}`);
      const list = polls.get(m[1]) ?? [];
      list.push(Date.parse(e.at));
      polls.set(m[1], list);
    }
  };
  const collector = setInterval(() => void collect().catch(() => undefined), 2_000);
  const handles: string[] = [];
  const errors: string[] = [];
  const t0 = Date.now();
  // No baseline side here: the CPU rows are ours alone, per request, from its start to its end.
  const cpu = noCpu();
  try {
    await meterStackCpu(stack, { worker: stack.ours, receiver: stack.receiver }, cpu, () => startAndWait());
  } finally {
    clearInterval(collector);
  }
  async function startAndWait() {
    const starts = await closedLoop(o.requests, 50, async (i) => {
      const h = await startPosRemoteRequest(stack.starters, {
        reference: uid('bp'),
        terminal_id: terminals[i],
        amount: 150_000,
        options: { pollIntervalMs: o.pollIntervalMs },
      });
      handles.push(h.workflowId);
    });
    errors.push(...starts.errors);
    log(
      `  pos-poll: ${handles.length} requests started in ${((Date.now() - t0) / 1000).toFixed(1)} s; waiting for the terminals (${o.holdMs / 1000} s)…`,
    );
    const ended = await closedLoop(handles.length, 100, async (i) => {
      const r = await stack.starters.client.workflow.getHandle(handles[i]).result();
      if (!['success', 'failed'].includes((r as { status: string }).status))
        throw new Error(`a remote request ended ${(r as { status: string }).status}`);
    });
    errors.push(...ended.errors);
  }
  await collect();
  const late = [...polls.values()].flatMap((ts) => lateness(ts, o.pollIntervalMs));
  const absLate = late.map((v) => Math.abs(v));
  let timeouts = 0;
  for (const id of handles.slice(0, o.requests)) {
    const h = await stack.starters.client.workflow.getHandle(id).fetchHistory();
    timeouts += (h.events ?? []).filter(
      (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
    ).length;
  }
  const s = summarize(absLate);
  const note = topErrors(errors).join(' | ') || undefined;
  return {
    rows: [
      row(
        'pos-poll',
        `poll-interval jitter p99 (${o.requests} open, every ${o.pollIntervalMs} ms)`,
        'ms',
        s.p99,
        null,
        { op: '<', value: 500 },
        note,
      ),
      row('pos-poll', 'poll-interval jitter p50', 'ms', s.p50, null),
      row('pos-poll', 'E2 polls observed', 'polls', late.length + polls.size, null),
      row('pos-poll', 'activity timeouts (heartbeat)', 'timeouts', timeouts, null, { op: '<=', value: 0 }),
      row('pos-poll', 'requests that did not end success/failed', 'flows', errors.length, null, { op: '<=', value: 0 }),
      ...stackCpuRows('pos-poll', 'remote request', { cpu, flows: handles.length }),
    ],
    distributions: [],
    details: { lateness: { p50: s.p50, p90: s.p90, p99: s.p99, max: s.max, count: s.count } },
  };
}
