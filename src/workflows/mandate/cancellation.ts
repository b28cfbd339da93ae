// Ending a mandate at the service (D4): on request (Update or signal), releasing one the flow will
// not use, and the non-cancellable cleanup after a Temporal cancel of the workflow: the in-flight
// debit settles, unresolved debits are requeried, the mandate is cancelled at the service.
import { ApplicationFailure, CancellationScope, allHandlersFinished, condition } from '@temporalio/workflow';
import { FINAL_MANDATE_STATUSES, type MandateState } from '../../shared/mandate';
import { failureMessage } from '../../shared/failures';
import { settle as settlePresence } from '../steps/send-once';
import { reads } from './proxies';
import { refusal, type MandateLedger } from './ledger';

export class MandateCancellation {
  constructor(private readonly ledger: MandateLedger) {}

  /**
   * cancelMandate (Update): waits for the mandate create (D1) in flight, then cancels (the mandate cancel, D4) under
   * the lock.
   */
  async onUpdate(): Promise<MandateState> {
    const { state } = this.ledger;
    await condition(() => state.status !== 'creating'); // The mandate create (D1) in flight: cancel what it creates
    if (state.status === 'cancelled') return state;
    if (FINAL_MANDATE_STATUSES.includes(state.status))
      throw refusal('MandateEnded', `the mandate already ended: ${state.status}`);
    await this.ledger.exclusive(() => this.cancel());
    return state;
  }

  check(): void {
    const { status } = this.ledger.state;
    if (status !== 'cancelled' && FINAL_MANDATE_STATUSES.includes(status))
      throw new Error(`the mandate already ended: ${status}`);
  }

  /** The signal's cancel: a refusal is recorded and the mandate goes on; a new signal tries again. */
  async onSignal(): Promise<void> {
    this.ledger.cancelRequested = false;
    try {
      await this.ledger.exclusive(() => this.cancel());
    } catch (err) {
      // cancel() has recorded the service's refusal already; anything else (the mandate cancel (D4) unreachable) is
      // recorded here.
      if (!(err instanceof ApplicationFailure && err.type === 'CancelFailed'))
        this.ledger.fail(`cancel: ${failureMessage(err)}`);
    }
  }

  /** The mandate cancel (D4), under the lock: the mandate is cancelled at the service, then here. */
  private async cancel(): Promise<void> {
    const { ledger } = this;
    const { state } = ledger;
    if (state.status === 'cancelled') return; // idempotent
    let alreadyCancelled = false;
    if (state.mandateId) {
      const res = await reads.cancelMandate(state.mandateId);
      if (!res.cancelled) {
        ledger.fail(`cancel: ${res.reason ?? 'refused'}`);
        ledger.tell('mandate.needs_attention', {
          status: state.status,
          reason: `cancel requested, but the service did not cancel the mandate: ${res.reason ?? 'no reason given'}`,
        });
        throw refusal('CancelFailed', `the service did not cancel the mandate: ${res.reason ?? 'no reason given'}`);
      }
      alreadyCancelled = res.alreadyCancelled;
    }
    state.nextDebitAt = undefined;
    ledger.setStatus(
      'cancelled',
      alreadyCancelled ? 'cancelled (the service reported it already cancelled)' : 'cancelled on request',
    );
  }

  /**
   * Best effort (D4): a mandate the flow no longer uses is cancelled at the service, so that an
   * initiated one left behind does not block the customer's e-mail for a new one.
   */
  async releaseAtService(why: string): Promise<void> {
    const { ledger } = this;
    if (!ledger.state.mandateId) return;
    try {
      const res = await reads.cancelMandate(ledger.state.mandateId);
      if (!res.cancelled) ledger.fail(`release after ${why}: ${res.reason ?? 'refused'}`);
    } catch (err) {
      ledger.fail(`release after ${why}: ${failureMessage(err)}`);
    }
  }

  /**
   * The workflow was cancelled (Temporal cancel): in a non-cancellable scope, the in-flight call
   * finishes (send-once settles it), pending and unknown debits are requeried, the mandate is
   * cancelled at the service, and the flow records it. It ends only once no debit is unresolved
   * (the background requery and resolveDebit go on meanwhile).
   */
  async cleanUpAfterCancel(): Promise<MandateState> {
    const { ledger } = this;
    const { state } = ledger;
    return CancellationScope.nonCancellable(async () => {
      // The in-flight send (send-once, non-cancellable) finishes; handlers following a pending debit stop.
      await condition(() => ledger.idle());
      for (const d of ledger.unresolved()) {
        const presence = await settlePresence({
          requery: ledger.requeryDebit(d.reference),
          settleMs: 0,
          absentReads: 1,
        });
        if (presence?.found) ledger.applyRecord(d, presence.record, true);
        if (d.status === 'pending')
          ledger.park(d, `${d.error ?? 'pending'}; the workflow was cancelled before it was final`);
      }
      const wasFinal = FINAL_MANDATE_STATUSES.includes(state.status);
      // The mandate cancel (D4) written out, not releaseAtService: a helper's extra await would move the commands after
      // it (flow.ts).
      if (!wasFinal && state.mandateId) {
        try {
          const res = await reads.cancelMandate(state.mandateId);
          if (!res.cancelled) ledger.fail(`cancel after the workflow was cancelled: ${res.reason ?? 'refused'}`);
        } catch (err) {
          ledger.fail(`cancel after the workflow was cancelled: ${failureMessage(err)}`);
        }
      }
      state.nextDebitAt = undefined;
      if (!wasFinal)
        ledger.setStatus('cancelled', 'the workflow was cancelled; the mandate was cancelled at the service');
      await condition(() => ledger.unresolved().length === 0 && allHandlersFinished());
      await ledger.eventsHandedOver();
      return state;
    });
  }
}
