// The admin API under /__admin (no auth; bind the sandbox to loopback): ledger, clock,
// faults, request log, reset.
import { randomUUID } from 'node:crypto';
import { fail, ok, type FaultRule, type Handler, type SandboxCore } from './core';

const FAULT_KINDS = ['latency', 'error5xx', 'reset', 'drop-before-processing', 'drop-after-processing'];

export function adminHandler(core: SandboxCore, hooks: { settle(): void; reset(): void; extra?: Handler }): Handler {
  return (ctx) => {
    const { method, path, query, body } = ctx;
    hooks.settle();
    if (method === 'GET' && path === '/__admin/ledger') {
      const reference = query.get('reference');
      const kind = query.get('kind');
      return ok(core.ledgerEntries.filter((e) => (!reference || e.reference === reference) && (!kind || e.kind === kind)));
    }
    if (method === 'GET' && path === '/__admin/requests') return ok(core.requestLog);
    if (method === 'GET' && path === '/__admin/clock') return ok({ now: core.clock.iso() });
    if (method === 'POST' && path === '/__admin/clock/advance') {
      const ms = body.ms;
      if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) return fail(400, 'ms must be a non-negative integer');
      core.clock.advance(ms);
      hooks.settle();
      return ok({ now: core.clock.iso() });
    }
    if (method === 'POST' && path === '/__admin/faults') {
      if (typeof body.path !== 'string' || !FAULT_KINDS.includes(String(body.kind))) return fail(400, `path is required and kind must be one of ${FAULT_KINDS.join(', ')}`);
      const rule: FaultRule = {
        id: randomUUID(),
        path: body.path,
        kind: body.kind as FaultRule['kind'],
        method: typeof body.method === 'string' ? body.method : undefined,
        count: typeof body.count === 'number' ? body.count : undefined,
        latencyMs: typeof body.latencyMs === 'number' ? body.latencyMs : undefined,
        status: typeof body.status === 'number' ? body.status : undefined,
      };
      core.faults.push(rule);
      return ok(rule);
    }
    if (method === 'DELETE' && path === '/__admin/faults') {
      core.faults = [];
      return ok({});
    }
    if (method === 'POST' && path === '/__admin/reset') {
      hooks.reset();
      return ok({});
    }
    return hooks.extra ? hooks.extra(ctx) : fail(404, 'Unknown admin endpoint');
  };
}
