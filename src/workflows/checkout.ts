// Hosted checkout: the checkout initiate (A1) creates the transaction and its checkout_url, which the starter gets at
// once through update-with-start (the `checkoutUrl` Update waits for the checkout initiate's answer). The flow then
// waits for charge_successful or for the checkout's expiry, verifying the reference every minute
// meanwhile (a webhook may be lost), and verify decides the result. The checkout initiate is sent once (again only
// for a reference the service does not know). The state, the end and the cancel clean-up are
// PaymentFlow's (./steps/payment-flow.ts).
import { setHandler } from '@temporalio/workflow';
import { checkoutStateQuery, checkoutUrlUpdate, type CheckoutInput, type CheckoutState } from '../shared/checkout';
import { ANSWERED_FINAL_STATUSES, PAYMENT_DEFAULTS } from '../shared/payment-common';
import { PaymentFlow, expectedPayment } from './steps/payment-flow';
import { fromLookup, sendPayment, sends, type Confirmation } from './steps/payment-steps';

export async function checkoutWorkflow(input: CheckoutInput): Promise<CheckoutState> {
  return new CheckoutFlow(input).run();
}

class CheckoutFlow extends PaymentFlow<CheckoutState> {
  // --- state ---

  constructor(private readonly input: CheckoutInput) {
    super(
      input.transactionRef,
      expectedPayment(input),
      { transactionRef: input.transactionRef, status: 'initiating', webhooksReceived: 0 },
      ANSWERED_FINAL_STATUSES,
    );
  }

  /**
   * A webhook-confirmed payment also records what the webhook says was paid (the token_id of the card tokenisation (A3)
   * among it).
   */
  override conclude(c: Confirmation): void {
    const event = this.inbox.event;
    if (c.confirmedBy === 'webhook' && event) {
      this.state.tokenId = event.tokenId;
      this.state.transactionType = event.transactionType;
      this.state.amountPaid = event.amount;
      this.state.meta = event.meta;
    }
    super.conclude(c);
  }

  // --- handlers ---

  private listen(): void {
    setHandler(checkoutStateQuery, () => this.snapshot());
    setHandler(checkoutUrlUpdate, () => this.checkoutUrl());
  }

  /**
   * checkoutUrl (Update, with start): the checkout_url once the checkout initiate (A1) answered, or the checkout
   * initiate's failure.
   */
  private async checkoutUrl(): Promise<{ checkoutUrl: string; transactionRef: string }> {
    await this.awaitFirstAnswer(() => this.state.checkoutUrl, 'CheckoutFailed', 'the checkout could not be created');
    return { checkoutUrl: this.state.checkoutUrl!, transactionRef: this.ref };
  }

  // --- main steps ---

  async run(): Promise<CheckoutState> {
    this.listen();
    this.publish(this.input.isRecurring ? 'recurring' : 'checkout', this.input);
    return this.recordOutcomeOnCancel(async () => {
      await this.initiate();
      return this.awaitPayment();
    });
  }

  /** The checkout initiate (A1): sent once; a second time only when verify proved the first never arrived. */
  private async initiate(): Promise<void> {
    const sent = await sendPayment(this.ref, () => sends.initiateCheckout(this.input));
    this.readSent(
      sent,
      { answer: "the checkout's", request: 'the checkout' },
      {
        answered: (answer) => {
          this.state.checkoutUrl = answer.checkoutUrl;
          this.setStatus('open');
        },
        // The checkout exists but its URL was lost: nobody can open it, it lapses unpaid.
        pending: (lost) =>
          this.setStatus('failed', `the checkout's answer was lost (${lost}): the checkout cannot be opened`),
        succeeded: (record) => this.conclude(fromLookup(record, this.expected)),
      },
    );
  }

  /** Open until the expiry, verifying meanwhile; then verify decides (expired when still pending). */
  private async awaitPayment(): Promise<CheckoutState> {
    const { input } = this;
    const expiryMs = input.expiryMs ?? PAYMENT_DEFAULTS.checkoutExpiryMs;
    this.pending = { as: 'expired', reason: `not paid within ${expiryMs} ms` };
    return this.awaitPayerAndFinish(this.state.status === 'open' ? expiryMs : undefined, input);
  }
}
