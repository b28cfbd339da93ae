// USSD payment: the USSD initiate (B5) hands back the code and its expiry (to the starter at once, through
// update-with-start on `ussdCode`); the flow waits for the webhook until expiresAt, verifying the
// reference meanwhile, then verify decides. The USSD initiate is sent once (again only for a reference the
// service does not know); a lost answer is settled by verify. The state, the end and the cancel
// clean-up are PaymentFlow's (./steps/payment-flow.ts).
import { setHandler } from '@temporalio/workflow';
import { ussdCodeUpdate, type UssdPaymentInput } from '../shared/ussd-payment';
import { DIRECT_FINAL_STATUSES, directPaymentStateQuery, type DirectPaymentState } from '../shared/payment-common';
import { PaymentFlow, directPaymentState, expectedPayment } from './steps/payment-flow';
import { sendPayment, sends } from './steps/payment-steps';

/** When the USSD initiate (B5) gives no parseable expiresAt, the flow waits this long (the sandbox's code lifetime). */
const FALLBACK_USSD_WAIT_MS = 10 * 60_000;

export async function ussdPaymentWorkflow(input: UssdPaymentInput): Promise<DirectPaymentState> {
  return new UssdPaymentFlow(input).run();
}

class UssdPaymentFlow extends PaymentFlow<DirectPaymentState> {
  // --- state ---

  constructor(private readonly input: UssdPaymentInput) {
    super(input.transactionRef, expectedPayment(input), directPaymentState(input), DIRECT_FINAL_STATUSES);
    this.pending = { as: 'expired', reason: 'the USSD code expired unpaid' };
  }

  // --- handlers ---

  private listen(): void {
    setHandler(directPaymentStateQuery, () => this.snapshot());
    setHandler(ussdCodeUpdate, () => this.ussdCode());
  }

  /**
   * ussdCode (Update, with start): the code and its expiry once the USSD initiate (B5) answered, or the USSD initiate's
   * failure.
   */
  private async ussdCode(): Promise<{ transactionRef: string; ussdCode: string; expiresAt?: string }> {
    await this.awaitFirstAnswer(() => this.state.ussdCode, 'UssdFailed', 'no USSD code was issued');
    return { transactionRef: this.ref, ussdCode: this.state.ussdCode!, expiresAt: this.state.expiresAt };
  }

  // --- main steps ---

  async run(): Promise<DirectPaymentState> {
    this.listen();
    this.publish('ussd', this.input);
    return this.recordOutcomeOnCancel(async () => {
      await this.initiate();
      return this.awaitPayment();
    });
  }

  /** The USSD initiate (B5): sent once; a second time only when verify proved the first never arrived. */
  private async initiate(): Promise<void> {
    const sent = await sendPayment(this.ref, () => sends.initiateUssd(this.input));
    this.readSent(
      sent,
      { answer: "the USSD request's", request: 'the USSD request' },
      {
        answered: (answer) => {
          Object.assign(this.state, {
            ussdCode: answer.ussdCode,
            expiresAt: answer.expiresAt,
            authModel: 'USSDCodeGenerated',
          });
          this.setStatus('awaiting_payment');
        },
        pending: (lost) => {
          // The code exists at the service but nobody knows it: it lapses unpaid.
          this.setStatus('confirming', `the USSD request's answer was lost (${lost})`);
          this.pending = { as: 'expired', reason: "the USSD request's answer was lost: the payer never got the code" };
        },
      },
    );
  }

  /** Until the code's expiry, verifying meanwhile; then verify decides (expired when still pending). */
  private async awaitPayment(): Promise<DirectPaymentState> {
    const expiresAt = Date.parse(this.state.expiresAt ?? '');
    const waitMs = Number.isNaN(expiresAt) ? FALLBACK_USSD_WAIT_MS : expiresAt - Date.now();
    return this.awaitPayerAndFinish(
      this.state.status === 'awaiting_payment' ? Math.max(waitMs, 1) : undefined,
      this.input,
    );
  }
}
