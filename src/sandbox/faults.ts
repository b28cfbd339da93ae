// Fault injection. Request faults (POST /__admin/faults) act on the HTTP exchange with the
// caller; webhook faults (POST /__admin/webhook-faults) act on the notifications the sandbox
// sends. Both apply to the next `count` matches (unlimited when count is absent).
import { randomUUID } from 'node:crypto';

export const REQUEST_FAULT_KINDS = [
  'latency',
  'error5xx',
  'reset',
  'drop-before-processing',
  'drop-after-processing',
] as const;
export type RequestFaultKind = (typeof REQUEST_FAULT_KINDS)[number];

export interface FaultRule {
  id: string;
  /** Any method when absent. */
  method?: string;
  /** A path prefix, or a regular expression when it starts with `^`. Matched against the path without the query. */
  path: string;
  /**
   * Only requests whose query string (without the `?`) contains this text, e.g. `session_id=123`:
   * so that concurrent callers of one path can each get a fault of their own. Any query when absent.
   */
  query?: string;
  kind: RequestFaultKind;
  /** Matches left; unlimited when absent. */
  count?: number;
  /** latency: delay (real milliseconds) before the request is processed. Default 1000. */
  latencyMs?: number;
  /** error5xx: the status to answer. Default 503. */
  status?: number;
}

/** Faults that apply to their next `count` matches (every match without a count), as both kinds keep them. */
class FaultStore<T extends { count?: number }> {
  protected rules: T[] = [];

  /** The first fault that matches, one of its uses taken (one used up is removed). */
  protected use(matches: (fault: T) => boolean): T | undefined {
    const fault = this.rules.find(matches);
    if (fault?.count === undefined) return fault;
    fault.count -= 1;
    if (fault.count <= 0) this.rules = this.rules.filter((f) => f !== fault);
    return fault;
  }

  list(): T[] {
    return this.rules.map((f) => ({ ...f }));
  }

  clear(): void {
    this.rules = [];
  }
}

export class RequestFaults extends FaultStore<FaultRule> {
  /** Validates and adds a rule; returns an error message for a bad rule. */
  add(input: Record<string, unknown>): FaultRule | string {
    if (typeof input.path !== 'string' || input.path === '') return 'path is required';
    if (!REQUEST_FAULT_KINDS.includes(input.kind as RequestFaultKind))
      return `kind must be one of ${REQUEST_FAULT_KINDS.join(', ')}`;
    if (input.path.startsWith('^')) {
      try {
        new RegExp(input.path);
      } catch {
        return 'path is not a valid regular expression';
      }
    }
    if (input.count !== undefined && (!Number.isSafeInteger(input.count) || (input.count as number) < 1))
      return 'count must be a positive integer';
    if (
      input.latencyMs !== undefined &&
      (!Number.isSafeInteger(input.latencyMs) ||
        (input.latencyMs as number) < 0 ||
        (input.latencyMs as number) > 120_000)
    ) {
      return 'latencyMs must be an integer between 0 and 120000';
    }
    if (
      input.status !== undefined &&
      (!Number.isSafeInteger(input.status) || (input.status as number) < 500 || (input.status as number) > 599)
    )
      return 'status must be a 5xx code';
    if (input.method !== undefined && typeof input.method !== 'string') return 'method must be a string';
    if (input.query !== undefined && (typeof input.query !== 'string' || input.query === ''))
      return 'query must be a non-empty string';
    const rule: FaultRule = {
      id: randomUUID(),
      path: input.path,
      kind: input.kind as RequestFaultKind,
      ...(input.method ? { method: String(input.method).toUpperCase() } : {}),
      ...(input.query !== undefined ? { query: input.query as string } : {}),
      ...(input.count !== undefined ? { count: input.count as number } : {}),
      ...(input.latencyMs !== undefined ? { latencyMs: input.latencyMs as number } : {}),
      ...(input.status !== undefined ? { status: input.status as number } : {}),
    };
    this.rules.push(rule);
    return rule;
  }

  /** The first rule matching the request, its count taken; exhausted rules are removed. */
  take(method: string, path: string, query = ''): FaultRule | undefined {
    const rule = this.use(
      (r) =>
        (!r.method || r.method === method) &&
        (r.query === undefined || query.includes(r.query)) &&
        (r.path.startsWith('^') ? new RegExp(r.path).test(path) : path.startsWith(r.path)),
    );
    return rule && { ...rule };
  }
}

export const WEBHOOK_FAULT_KINDS = ['duplicate', 'fail', 'hold'] as const;
export type WebhookFaultKind = (typeof WEBHOOK_FAULT_KINDS)[number];
/** Payment webhooks (E-1), virtual-account notifications (E-2), or both. */
export type WebhookTarget = 'payment' | 'virtual-account';

export interface WebhookFault {
  id: string;
  kind: WebhookFaultKind;
  count: number;
  target?: WebhookTarget;
}

/**
 * duplicate: the next notification is delivered twice. fail: the next delivery attempt is not
 * made and counts as not acknowledged (error log for credit notifications, retry on the schedule). hold: the next
 * notification is held back until `POST /__admin/webhook-faults/release`, which sends the held
 * ones newest first (out of order).
 */
export class WebhookFaults extends FaultStore<WebhookFault> {
  add(input: Record<string, unknown>): WebhookFault | string {
    if (!WEBHOOK_FAULT_KINDS.includes(input.kind as WebhookFaultKind))
      return `kind must be one of ${WEBHOOK_FAULT_KINDS.join(', ')}`;
    const count = input.count === undefined ? 1 : input.count;
    if (!Number.isSafeInteger(count) || (count as number) < 1) return 'count must be a positive integer';
    if (input.target !== undefined && input.target !== 'payment' && input.target !== 'virtual-account')
      return "target must be 'payment' or 'virtual-account'";
    const fault: WebhookFault = {
      id: randomUUID(),
      kind: input.kind as WebhookFaultKind,
      count: count as number,
      ...(input.target ? { target: input.target as WebhookTarget } : {}),
    };
    this.rules.push(fault);
    return fault;
  }

  /** True (and one use taken) when a fault of this kind applies to the target. */
  take(kind: WebhookFaultKind, target: WebhookTarget): boolean {
    return this.use((f) => f.kind === kind && f.count > 0 && (!f.target || f.target === target)) !== undefined;
  }
}
