// Liveness and readiness over HTTP:
//   GET /healthz  200 while the process is alive (503 once the thing it serves failed for good)
//   GET /readyz   200 when it can do its work now, 503 otherwise; the body names each check
// The worker gets its own small server on HEALTH_PORT (Kubernetes probes, 8080 in production); the
// webhook receiver and the codec server answer both routes on their own ports.
// Bodies hold check names and booleans only: no address, key or error text.
import type { Server } from 'node:http';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { ConnectionLike } from '@temporalio/client';
import { createSafeServer, replyJson } from '../http/safe-server';
import { httpMetricsObserver } from '../telemetry/metrics';

export interface Readiness {
  ready: boolean;
  checks: Record<string, boolean>;
}

export interface HealthChecks {
  live(): boolean;
  ready(): Promise<Readiness>;
}

/** How long a readiness probe waits for Temporal's health service. */
export const TEMPORAL_PROBE_TIMEOUT_MS = 2_000;

/** True when Temporal's frontend answers (GetSystemInfo) within the probe timeout. */
export async function temporalReachable(
  connection: Pick<ConnectionLike | NativeConnection, 'workflowService' | 'withDeadline'>,
): Promise<boolean> {
  try {
    await connection.withDeadline(Date.now() + TEMPORAL_PROBE_TIMEOUT_MS, () =>
      connection.workflowService.getSystemInfo({}),
    );
    return true;
  } catch {
    return false;
  }
}

/** Answers /healthz and /readyz from `checks`; true when the request was one of them. */
export async function answerHealth(
  method: string | undefined,
  path: string,
  checks: HealthChecks,
  res: import('node:http').ServerResponse,
): Promise<boolean> {
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (path === '/healthz') {
    const live = checks.live();
    replyJson(res, live ? 200 : 503, { ok: live });
    return true;
  }
  if (path === '/readyz') {
    const r = await checks.ready();
    replyJson(res, r.ready ? 200 : 503, r);
    return true;
  }
  return false;
}

/**
 * The worker process's health: alive unless a worker failed; ready when every worker of the process
 * (one per task queue it polls, src/workers/worker-group.ts) runs and polls, and Temporal answers.
 * Attach the workers once they exist (the server starts first, so liveness answers while they connect).
 */
export class WorkerHealth implements HealthChecks {
  private workers: readonly Worker[] = [];
  private connection: NativeConnection | undefined;

  attach(workers: Worker | readonly Worker[], connection: NativeConnection): void {
    this.workers = Array.isArray(workers) ? workers : [workers as Worker];
    this.connection = connection;
  }

  live(): boolean {
    return this.workers.every((w) => w.getState() !== 'FAILED');
  }

  async ready(): Promise<Readiness> {
    if (this.workers.length === 0 || !this.connection)
      return { ready: false, checks: { worker: false, polling: false, temporal: false } };
    const statuses = this.workers.map((w) => w.getStatus());
    const running = statuses.every((s) => s.runState === 'RUNNING');
    const polling = statuses.every(isPolling);
    const temporal = running ? await temporalReachable(this.connection) : false;
    return { ready: running && polling && temporal, checks: { worker: running, polling, temporal } };
  }
}

/**
 * A running worker polls when no poller failed and at least one polls. A poller of a kind the worker
 * has nothing registered for (an activity-only worker of the money or reads queue has no workflows)
 * is SHUTDOWN from the start; while the worker runs, SHUTDOWN means nothing else.
 */
function isPolling(
  status: Pick<ReturnType<Worker['getStatus']>, 'workflowPollerState' | 'activityPollerState'>,
): boolean {
  const pollers = [status.workflowPollerState, status.activityPollerState];
  return !pollers.includes('FAILED') && pollers.includes('POLLING');
}

export interface RunningHealthServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** A small HTTP server with /healthz and /readyz only (the worker's, on HEALTH_PORT). */
export async function startHealthServer(opts: {
  host: string;
  port: number;
  checks: HealthChecks;
  name?: string;
}): Promise<RunningHealthServer> {
  const route = (path: string) => (path === '/healthz' || path === '/readyz' ? path : 'other');
  const server = createSafeServer(
    async (req, res, url) => {
      if (!(await answerHealth(req.method, url.pathname, opts.checks, res)))
        replyJson(res, 404, { error: 'not found' });
    },
    { observe: httpMetricsObserver(opts.name ?? 'health', route) },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  return {
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
