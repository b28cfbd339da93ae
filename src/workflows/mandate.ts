// Direct-debit mandate: create (D1), wait for the customer's OTP (Update; D2, the OTP resend (D6) on an expired
// session), then debit — on the FIXED schedule with durable timers, or on request for VARIABLE
// (Update with a validator, idempotent by the caller's key) — until end_date, a spent balance, or
// cancellation (D4). See docs/flows-mandates.md.
//
// Money safety:
//  - the mandate create and every debit (D3) go through the one send-once rule (./steps/send-once.ts). The mandate
//    create is requeried by the mandate list (D5) by merchant_ref; a debit by verify on its own transaction_reference
//    (GET /transaction/verify).
//  - An outcome_unknown debit stays visible (PaymentStatus=outcome_unknown), is requeried in the
//    background for `unresolvedRequeryForMs`, can be resolved by an operator (resolveDebit). The
//    flow does not end while a debit is unresolved.
//  - the mandate create and the debit heartbeat while their call is open (10 s heartbeat timeout).
//  - The BVN and the OTP never reach the workflow: the starter seals them into the claim-check
//    store. A BVN whose record expired before the mandate create was sent ends the flow as failed (nothing was
//    sent: start it again with the BVN); an expired OTP fails its Update and the flow waits on.
// continue-as-new keeps long mandates' history bounded.
//
// Layout: `mandateWorkflow` (the whole story in a few lines) over `MandateFlow` (./mandate/flow.ts:
// its handlers and main steps) and its parts in ./mandate/: approval, debits, the FIXED observer,
// cancellation, over the ledger they share (state and bookkeeping) and the activity proxies.
import { CancellationScope, allHandlersFinished, condition, isCancellation } from '@temporalio/workflow';
import type { MandateCarry, MandateInput, MandateState } from '../shared/mandate';
import { MandateFlow } from './mandate/flow';

export async function mandateWorkflow(input: MandateInput, carry?: MandateCarry): Promise<MandateState> {
  const flow = new MandateFlow(input, carry);
  const { ledger } = flow;
  flow.listen();
  ledger.publish();
  void CancellationScope.nonCancellable(() => flow.debits.watchUnresolved());
  try {
    const final = await flow.run();
    // The flow does not end while a debit may have moved money unrecorded.
    await condition(() => ledger.unresolved().length === 0 && allHandlersFinished());
    ledger.tellEnded();
    await ledger.eventsHandedOver();
    return final;
  } catch (err) {
    if (!isCancellation(err)) throw err;
    return flow.cancellation.cleanUpAfterCancel();
  }
}
