// The whole stack's CPU while one side of a scenario runs: the side's worker, the Temporal server,
// the sandbox, the side's webhook receiver, the claim-check PostgreSQL (its process tree) and the
// client (this process). Every scenario reports it per flow, for each side it has (issue #25: a
// side's cost is not only its worker's).
import { procCpuMs, treeCpuMs, type BenchProcess } from './processes';
import { row, type Row } from './stats';
import type { BenchStack } from './stack';

export const STACK_PARTS = ['worker', 'server', 'sandbox', 'receiver', 'postgres', 'client'] as const;
export type StackPart = (typeof STACK_PARTS)[number];
export type StackCpu = Record<StackPart, number>;

export const noCpu = (): StackCpu => ({ worker: 0, server: 0, sandbox: 0, receiver: 0, postgres: 0, client: 0 });

const clientCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Which worker and receiver a side uses (undefined: the side has none, e.g. a plain script). */
export interface SideProcesses {
  worker?: BenchProcess;
  receiver?: BenchProcess;
}

function snapshot(stack: BenchStack, side: SideProcesses): StackCpu {
  return {
    worker: side.worker?.cpuMs() ?? 0,
    server: procCpuMs(stack.devServer.process.pid!),
    sandbox: stack.sandbox.cpuMs(),
    receiver: side.receiver?.cpuMs() ?? 0,
    postgres: treeCpuMs(stack.postgresPid),
    client: clientCpuMs(),
  };
}

/** Runs `work` and adds the CPU each part of the stack spent meanwhile into `into`. */
export async function meterStackCpu<T>(
  stack: BenchStack,
  side: SideProcesses,
  into: StackCpu,
  work: () => Promise<T>,
): Promise<T> {
  const before = snapshot(stack, side);
  try {
    return await work();
  } finally {
    const after = snapshot(stack, side);
    for (const p of STACK_PARTS) into[p] += after[p] - before[p];
  }
}

export const wholeStackMs = (cpu: StackCpu): number => STACK_PARTS.reduce((a, p) => a + cpu[p], 0);

/**
 * Rows: each part's CPU per flow and the whole stack's, ours against the baseline's (null: the
 * scenario has no baseline side). `what` names the flow ("card", "vend", "webhook").
 */
export function stackCpuRows(
  scenario: string,
  what: string,
  ours: { cpu: StackCpu; flows: number },
  base?: { cpu: StackCpu; flows: number },
): Row[] {
  const per = (s: { cpu: StackCpu; flows: number } | undefined, ms: (c: StackCpu) => number) =>
    s ? ms(s.cpu) / Math.max(s.flows, 1) : null;
  return [
    ...STACK_PARTS.map((p) =>
      row(
        scenario,
        `${what} ${p} CPU per flow`,
        'ms',
        per(ours, (c) => c[p])!,
        per(base, (c) => c[p]),
      ),
    ),
    row(scenario, `${what} whole-stack CPU per flow`, 'ms', per(ours, wholeStackMs)!, per(base, wholeStackMs)),
  ];
}
