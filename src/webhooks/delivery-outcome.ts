// How the receiver answers when handing a verified notification to Temporal did not work, and how
// concurrent copies of one delivery become one hand-over.
//
// The service redelivers what is not acknowledged. A failure that will fail the same way on every
// redelivery (a reference too long for a workflow id, a payload that cannot be serialised) answers
// 400, so the service stops; only a failure that may pass later (Temporal unreachable, overloaded)
// answers 503. A client that hung up is nobody's error: logged at debug, without a stack.
import type { IncomingMessage } from 'node:http';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcServiceError } from '@temporalio/client';
import { PayloadConverterError, ValueError } from '@temporalio/common';

/** What a failed hand-over means for the answer. */
export type DeliveryFailure =
  { kind: 'aborted' } | { kind: 'too-large' } | { kind: 'permanent'; reason: string } | { kind: 'transient' };

/** gRPC codes Temporal answers for a request that will never be accepted as sent. */
const PERMANENT_GRPC_CODES: ReadonlySet<number> = new Set([
  GrpcStatus.INVALID_ARGUMENT,
  GrpcStatus.OUT_OF_RANGE,
  GrpcStatus.FAILED_PRECONDITION,
]);

function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e && chain.length < 8; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

/** True when the request's client went away before we answered (reset, abort, premature close). */
export function isClientAbort(err: unknown, req: IncomingMessage): boolean {
  const code = (err as { code?: string } | undefined)?.code;
  return (
    code === 'ECONNRESET' ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    (err as Error | undefined)?.message === 'aborted' ||
    (req.destroyed && !req.complete)
  );
}

export function classifyDeliveryFailure(err: unknown, req: IncomingMessage): DeliveryFailure {
  if ((err as { statusCode?: number } | undefined)?.statusCode === 413) return { kind: 'too-large' };
  if (isClientAbort(err, req)) return { kind: 'aborted' };
  for (const e of causes(err)) {
    // JSON.stringify of the event overflowed the stack (a deeply nested meta) or met a value JSON
    // cannot hold: the same bytes fail the same way on every redelivery.
    if (e instanceof RangeError || e instanceof PayloadConverterError || e instanceof ValueError)
      return { kind: 'permanent', reason: 'the notification cannot be serialised into a workflow payload' };
    if (isGrpcServiceError(e) && PERMANENT_GRPC_CODES.has(e.code))
      // e.g. a workflow id over the server's length limit, a search attribute value over its size limit.
      return { kind: 'permanent', reason: 'Temporal refuses the notification as sent (invalid argument)' };
  }
  return { kind: 'transient' };
}

/**
 * Concurrent calls with one key share one run of `work`: the service may deliver the same
 * notification on two connections at once, and each copy must not become its own signal. The key
 * is forgotten when the run settles, so a later redelivery (after a failure) runs again.
 */
export class SingleFlight {
  private readonly running = new Map<string, Promise<unknown>>();

  /** `shared` is true for every caller but the one whose call ran `work`. */
  async run<T>(key: string, work: () => Promise<T>): Promise<{ value: T; shared: boolean }> {
    const existing = this.running.get(key) as Promise<T> | undefined;
    if (existing) return { value: await existing, shared: true };
    const started = work();
    this.running.set(key, started);
    try {
      return { value: await started, shared: false };
    } finally {
      this.running.delete(key);
    }
  }

  get size(): number {
    return this.running.size;
  }
}
