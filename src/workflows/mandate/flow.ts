// The mandate's flow over its parts: the handlers it answers (`listen`), then the main steps (`run`:
// approval, debit until the end, continue-as-new to keep history bounded).
//
// Determinism: the mandate is AUTO_UPGRADE and lives for months, so every run must give the same
// commands in the same order as the code that recorded it. The parts keep each step's awaits as they
// were (a helper that adds an `await` moves the commands after it by microtask ticks, which may put
// them after another coroutine's); the handlers are registered in the same order.
import { allHandlersFinished, condition, continueAsNew, log, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  DEFAULT_DEBITS_PER_RUN,
  MINIMUM_DEBIT_KOBO,
  cancelMandateSignal,
  cancelMandateUpdate,
  debitMandateUpdate,
  mandateDebitsQuery,
  mandateStateQuery,
  resolveDebitUpdate,
  type MandateCarry,
  type MandateInput,
  type MandateState,
} from '../../shared/mandate';
import { MandateApproval } from './approval';
import { MandateCancellation } from './cancellation';
import { MandateDebits } from './debits';
import { FixedMandateObserver } from './fixed-observer';
import { MandateLedger } from './ledger';

/** The mandate workflow's signature, for its continue-as-new (../mandate.ts defines the function). */
type MandateWorkflow = (input: MandateInput, carry?: MandateCarry) => Promise<MandateState>;

/** A condition's timeout must be positive: a VARIABLE mandate past its end wakes at once. */
const SOONEST_WAKE_MS = 1;

/** One run of a mandate (a continue-as-new starts the next from `carry`). */
export class MandateFlow {
  readonly ledger: MandateLedger;
  readonly cancellation: MandateCancellation;
  private readonly approval: MandateApproval;
  readonly debits: MandateDebits;
  private readonly fixed: FixedMandateObserver;

  constructor(
    private readonly input: MandateInput,
    private readonly carry: MandateCarry | undefined,
  ) {
    this.ledger = new MandateLedger(input, carry);
    this.cancellation = new MandateCancellation(this.ledger);
    this.approval = new MandateApproval(this.ledger, this.cancellation);
    this.debits = new MandateDebits(this.ledger);
    this.fixed = new FixedMandateObserver(this.ledger, this.debits);
  }

  // --- handlers ---

  listen(): void {
    const { ledger, cancellation, debits } = this;
    setHandler(mandateStateQuery, () => ledger.state);
    setHandler(mandateDebitsQuery, (references) => ({
      debits: references ? references.flatMap((r) => ledger.debits.get(r) ?? []) : ledger.inOrder(),
      lastSequence: ledger.sequence,
    }));
    setHandler(cancelMandateSignal, () => {
      ledger.cancelRequested = true;
    });
    setHandler(cancelMandateUpdate, () => cancellation.onUpdate(), { validator: () => cancellation.check() });
    // A continued run is past approval: its OTP handlers only refuse (see openOtpHandlers).
    if (this.carry) this.approval.openOtpHandlers();
    setHandler(debitMandateUpdate, (req) => debits.debitOnRequest(req), {
      validator: (req) => debits.checkDebitRequest(req),
    });
    setHandler(resolveDebitUpdate, (req) => debits.resolveDebit(req), {
      validator: (req) => debits.checkResolve(req),
    });
  }

  // --- the main steps ---

  /** Creation and approval (first run only), then debiting until the end. */
  async run(): Promise<MandateState> {
    if (!this.carry && !((await this.approval.start()) && (await this.approval.awaitOtp()))) return this.finish();
    if (!this.carry) this.fixed.skipDatesBeforeApproval();
    await this.debitUntilEnd();
    return this.end();
  }

  /** Debiting until the end: FIXED dates (fixed-observer.ts), or VARIABLE Updates (debitOnRequest). */
  private async debitUntilEnd(): Promise<void> {
    const { ledger, input } = this;
    const runLimit = input.debitsPerRun ?? DEFAULT_DEBITS_PER_RUN;
    let scheduleDone = false;
    while (!ledger.finished() && !scheduleDone) {
      if (ledger.cancelRequested) {
        await this.cancellation.onSignal();
        continue;
      }
      if (ledger.debitsThisRun >= runLimit || workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        if (ledger.finished() || ledger.cancelRequested) continue;
        log.info('continuing as new to keep history bounded', { debitCount: ledger.state.debitCount });
        await ledger.eventsHandedOver();
        await continueAsNew<MandateWorkflow>(input, ledger.carryOver());
      }
      if (input.fixed) scheduleDone = await this.fixed.nextDate(input.fixed);
      else {
        // VARIABLE: debits arrive as Updates; wake for cancellation, the end date, or continue-as-new.
        await condition(
          () =>
            ledger.cancelRequested ||
            ledger.finished() ||
            ledger.debitsThisRun >= runLimit ||
            workflowInfo().continueAsNewSuggested,
          Math.max(ledger.endAt - Date.now(), SOONEST_WAKE_MS),
        );
      }
    }
  }

  /** The end: no handler left running; an approved mandate completes, saying why. */
  private async end(): Promise<MandateState> {
    const { state } = this.ledger;
    state.nextDebitAt = undefined;
    await condition(allHandlersFinished);
    if (state.status === 'approved') {
      this.ledger.complete(
        state.balance < MINIMUM_DEBIT_KOBO
          ? 'balance_spent'
          : Date.now() >= this.ledger.endAt
            ? 'end_date_reached'
            : 'schedule_finished',
      );
    }
    return state;
  }

  /** The flow ends: no handler is left running. */
  private async finish(): Promise<MandateState> {
    await condition(allHandlersFinished);
    return this.ledger.state;
  }
}
