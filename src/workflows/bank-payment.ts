// Direct bank debit: the bank debit (B3) answers ValidateTOKEN or ValidateOTP; the payer's token or OTP arrives
// as an Update (B4), then verify — woken by the charge_successful webhook or the grace — confirms.
// The bank debit and the bank validation move money: one attempt each; a refusal proves nothing happened, anything else
// is settled by verifying the reference first (the bank debit is sent again only for a reference the service
// does not know). A code the service refuses fails the Update and the flow keeps waiting, up to
// MAX_REFUSED_CODES; no code within codeTimeoutMs lets verify decide (expired when the debit is
// still pending). The code arrives sealed (a claim-check handle): the token or OTP itself never
// enters history. The state, the end and the cancel clean-up are PaymentFlow's (./steps/payment-flow.ts).
import { condition, setHandler } from '@temporalio/workflow';
import { submitBankCodeUpdate, type BankPaymentInput } from '../shared/bank-payment';
import { DIRECT_FINAL_STATUSES, directPaymentStateQuery, type DirectPaymentState } from '../shared/payment-common';
import { PAYMENT_DEFAULTS } from '../shared/payment-common';
import { isClaimHandle } from '../shared/claim-check';
import { PaymentFlow, directPaymentState, expectedPayment } from './steps/payment-flow';
import { sendPayment, sends, settleCodeFailure } from './steps/payment-steps';

export async function bankPaymentWorkflow(input: BankPaymentInput): Promise<DirectPaymentState> {
  return new BankPaymentFlow(input).run();
}

class BankPaymentFlow extends PaymentFlow<DirectPaymentState> {
  // --- state ---

  /** A code is with the service. */
  private busy = false;

  constructor(private readonly input: BankPaymentInput) {
    super(input.transactionRef, expectedPayment(input), directPaymentState(input), DIRECT_FINAL_STATUSES);
  }

  // --- handlers ---

  private listen(): void {
    setHandler(directPaymentStateQuery, () => this.snapshot());
    setHandler(submitBankCodeUpdate, (code) => this.submitCode(code), { validator: (code) => this.checkCode(code) });
  }

  private checkCode(code: string): void {
    if (this.state.status !== 'awaiting_code' || this.busy)
      throw new Error(
        `no code is expected now (state ${this.state.status}${this.busy ? ', a code is being checked' : ''})`,
      );
    if (!isClaimHandle(code)) throw new Error('code must be sealed: pass the claim-check handle the starter made');
  }

  /**
   * submitBankCode (Update): the bank validation (B4) with the sealed code; a refusal or a lost answer is settled by
   * verify.
   */
  private async submitCode(code: string): Promise<DirectPaymentState> {
    this.busy = true;
    try {
      // The 200 of the bank validation (B4) ('Charge attempted') is not proof of payment: the webhook or verify
      // confirms.
      await sends.validateBank(this.ref, code);
      this.setStatus('confirming');
      return this.snapshot();
    } catch (err) {
      const words = { code: 'code', payment: 'debit', again: 'the code again' };
      await settleCodeFailure(this.ref, err, this.expected, this, words);
      return this.snapshot();
    } finally {
      this.busy = false;
    }
  }

  // --- main steps ---

  async run(): Promise<DirectPaymentState> {
    this.listen();
    this.publish('bank', this.input);
    return this.recordOutcomeOnCancel(async () => {
      await this.debit();
      await this.awaitCode();
      return this.finish(this.input.webhookGraceMs ?? PAYMENT_DEFAULTS.webhookGraceMs);
    });
  }

  /** The bank debit (B3): sent once; a second time only when verify proved the first never arrived. */
  private async debit(): Promise<void> {
    const sent = await sendPayment(this.ref, () => sends.chargeBank(this.input));
    this.readSent(
      sent,
      { answer: "the debit's", request: 'the debit' },
      {
        answered: (answer) => {
          this.state.authModel = answer.authModel;
          this.setStatus('awaiting_code');
        },
        // The debit exists: the payer has a token or receives an OTP either way; the bank validation (B4) is the same
        // call.
        pending: (lost) =>
          this.setStatus('awaiting_code', `the debit's answer was lost (${lost}); the auth model is unknown`),
      },
    );
  }

  /** The payer's token or OTP, until codeTimeoutMs; then verify decides (a success found then is a success). */
  private async awaitCode(): Promise<void> {
    if (this.state.status !== 'awaiting_code') return;
    const timeoutMs = this.input.codeTimeoutMs ?? PAYMENT_DEFAULTS.codeTimeoutMs;
    const until = Date.now() + timeoutMs;
    while (this.state.status === 'awaiting_code') {
      const moved = await condition(
        () => this.state.status !== 'awaiting_code' || this.inbox.event !== undefined,
        Math.max(until - Date.now(), 1),
      );
      if (this.inbox.event && this.state.status === 'awaiting_code') this.setStatus('confirming');
      else if (!moved && this.busy) await condition(() => !this.busy);
      else if (!moved) {
        // A deadline is not proof: verify decides.
        this.pending = { as: 'expired', reason: `no token or OTP within ${timeoutMs} ms` };
        this.setStatus('confirming', this.pending.reason);
      }
    }
  }
}
