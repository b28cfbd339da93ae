// Direct-debit mandate: create (D1), wait for the customer's OTP (Update; D2, D6 on an expired
// session), then debit — on the FIXED schedule with durable timers, or on request for VARIABLE
// (Update with a validator, idempotent by the caller's key) — until end_date, a spent balance, or
// cancellation (D4). See docs/flows-mandates.md.
//
// Money safety:
//  - D1 and every D3 go through the one send-once rule (./steps/send-once.ts). D1 is requeried by D5
//    merchant_ref; a debit by verify on its own transaction_reference (GET /transaction/verify).
//  - A requested debit's reference is derived from the caller's idempotency key
//    (`${mandateRef}-K<digest>`): the same key twice answers the same debit, never a second one.
//    Scheduled debits keep `${mandateRef}-D${sequence}`.
//  - D3's answer is read by its `data.status`: pending is requeried (bounded backoff) and then
//    parked as outcome_unknown; failed is failed.
//  - An outcome_unknown debit stays visible (PaymentStatus=outcome_unknown), is requeried in the
//    background for `unresolvedRequeryForMs`, can be resolved by an operator (resolveDebit), and
//    does not block later debits: its amount is only held back from `available`. The flow does
//    not end while a debit is unresolved.
//  - A Temporal cancel of the workflow runs a non-cancellable cleanup: the in-flight debit
//    settles, unresolved debits are requeried, the mandate is cancelled at the service (D4).
//  - D1 and D3 heartbeat while their call is open (10 s heartbeat timeout).
// continue-as-new keeps long mandates' history bounded.
// The BVN and the OTP never reach the workflow: the starter seals them into the claim-check
// store; the input carries `customer.bvnHandle` and the OTP Update a handle. D1 and D2 redeem
// them. A BVN whose record expired before D1 was sent ends the flow as failed (nothing was sent:
// start it again with the BVN); an expired OTP fails its Update (send it again) and the flow waits on.
//
// Layout: `mandateWorkflow` here (the whole story in a few lines) over `MandateFlow`
// (./mandate/flow.ts: its handlers and main steps), which runs its parts, each in ./mandate/:
// approval.ts (create, OTP), debits.ts (on request, send, follow, requery, resolve),
// fixed-observer.ts (the FIXED dates), cancellation.ts (D4, the cleanup after a cancel), over
// ledger.ts (the state and the bookkeeping the parts share) and proxies.ts (its activities).
import { CancellationScope, allHandlersFinished, condition, isCancellation } from '@temporalio/workflow';
import type { MandateCarry, MandateInput, MandateState } from '../shared/mandate';
import { MandateFlow } from './mandate/flow';

export async function mandateWorkflow(input: MandateInput, carry?: MandateCarry): Promise<MandateState> {
  const flow = new MandateFlow(input, carry);
  flow.listen();
  flow.publish();
  void CancellationScope.nonCancellable(() => flow.watchUnresolved());
  try {
    const final = await flow.run();
    // The flow does not end while a debit may have moved money unrecorded.
    await condition(() => flow.unresolved().length === 0 && allHandlersFinished());
    await flow.eventsHandedOver();
    return final;
  } catch (err) {
    if (!isCancellation(err)) throw err;
    return flow.cleanUpAfterCancel();
  }
}
