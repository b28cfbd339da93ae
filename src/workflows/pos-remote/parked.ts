// outcome_unknown, poll_error and expired_unobserved are parked, not final (docs/money-decisions.md):
// the terminal is given back, the request's record is looked up again on a backoff (the request of a lost request
// create (E1) searched for first) and the flow ends with the service's answer or an operator's resolveOutcome.
import type { PosRemoteRecord, PosRemoteRecordLookup, PosRemoteResult, PosRemoteStatus } from '../../shared/pos-remote';
import type { OutcomeResolution } from '../../shared/outcome';
import type { Presence } from '../steps/send-once';
import { awaitFinal, parkedRequery } from '../steps/unknown-outcome';
import { reads, type RemoteRequest } from './request';
import type { RequestSend } from './send';

type PosRemoteRecordFound = Extract<PosRemoteRecordLookup, { found: true }>;
type ParkedLook = { status: string; record: PosRemoteRecordFound['record'] };

export class ParkedRequest {
  constructor(
    private readonly request: RemoteRequest,
    private readonly send: RequestSend,
    private readonly resolution: () => OutcomeResolution | undefined,
    private readonly onParked: () => Promise<void>,
  ) {}

  /**
   * A parked request stays open, is looked up again on a backoff (its record in the transaction list (A6) by
   * request_ref; the request of a lost request create (E1) is searched for first), ends with the service's answer
   * (success, failed, or abandoned: expired) or with an operator's resolveOutcome (`cli ops resolve`), and after the
   * requery period waits for the operator only. Any other result is returned as it is.
   */
  async settle(result: PosRemoteResult): Promise<PosRemoteResult> {
    const { request } = this;
    const parkedAs = request.state.status;
    if (!request.isParked()) return result;
    const { o } = request;
    const why = request.state.message ?? parkedAs;
    const settled = await awaitFinal<ParkedLook>({
      requery: () => this.lookUp(),
      isFinal: (r) => ['success', 'failed', 'abandoned'].includes(r.status),
      absentIsFinal: () => false, // absence proves nothing here: only a record or an operator ends it
      startAs: 'outcome_unknown',
      setStatus: () => undefined, // the parked status (and PaymentStatus) says why it is parked
      onParked: this.onParked,
      resolution: this.resolution,
      ...parkedRequery(o),
    });
    if (settled.kind === 'resolved') {
      const r = settled.resolution;
      request.state.resolution = r;
      request.setStatus(
        r.outcome as PosRemoteStatus,
        `resolved by ${r.operator}: ${r.reason} (parked as ${parkedAs}: ${why})`,
      );
      return { ...result, ...request.result() };
    }
    if (settled.kind === 'absent') return result; // not reached: absentIsFinal is false
    const { status, record } = settled.record;
    request.setStatus(
      this.finalStatus(status),
      `the service's transaction record shows it ${status} (looked up again after: ${why})`,
    );
    return { ...result, ...request.result(), record: record as PosRemoteRecord };
  }

  /** What the service's record says, with a cancel request taken into account. */
  private finalStatus(status: string): PosRemoteStatus {
    const cancelled = this.request.cancelRequested;
    if (status === 'abandoned') return cancelled ? 'cancelled' : 'expired';
    if (status === 'success') return cancelled ? 'success_after_cancel' : 'success';
    return cancelled ? 'cancelled' : 'failed';
  }

  /**
   * A parked request's record (the transaction list (A6) by request_ref); the request of a lost request create (E1) is
   * searched for first.
   */
  private async lookUp(): Promise<Presence<ParkedLook>> {
    const { request } = this;
    let requestRef = request.state.requestRef;
    if (!requestRef) {
      const { exclude } = this.send;
      if (!exclude) return { found: false };
      const found = await reads.posRemoteFindRequest({ ...request.requestShape(), exclude });
      if (found.kind !== 'one') return { found: false };
      requestRef = request.published(found.request_ref, true);
    }
    const look = await reads.posRemoteLookupRecord({ request_ref: requestRef });
    return look.found ? { found: true, record: { status: look.status, record: look.record } } : { found: false };
  }
}
