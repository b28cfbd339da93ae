// Direct card payment.
//
//   charging ──charge (B1)──► awaiting_pin ──PIN (B2)──► awaiting_otp ──OTP (B2)──► confirming ──► success
//            ├─────► awaiting_otp                                              ▲        failed
//            └─────► awaiting_3ds ── payer completes auth_url (webhook/verify) ┘        expired
//                                                                                        unknown
// The card charge and the authorization move money: one attempt each. A refused request (400) proves nothing happened;
// any other failure is an unknown outcome, settled by verifying the reference before anything else:
// The card charge is sent once more only when the service does not know the reference at all.
// PIN and OTP arrive as Updates: the validator refuses a code in the wrong state or format (so
// nothing enters history); a code the service refuses fails the Update with its message and the
// flow keeps waiting, up to MAX_REFUSED_CODES. Each step has its timeout, after which verify
// decides (expired when the payment is still pending). The final state is verify's: at once when
// The card charge or the authorization answered Success (the sending activity reads the record right after the answer;
// when it could not, a local read), otherwise woken by the
// charge_successful webhook (a signal from the receiver) or by the grace passing; an unknown
// outcome is parked (./steps/payment-flow.ts).
// Card data, PIN and OTP never reach the workflow: the starter seals them into the claim-check
// store and the input and Updates carry only handles (plus BIN, last four and brand for display).
// When the sealed card expired before the card charge could be sent, the flow waits in awaiting_card for the
// card again (submitCard); an expired PIN/OTP fails its Update with SecretUnavailable.
//
// Layout: `cardPaymentWorkflow`, then `CardPaymentFlow` (on PaymentFlow): its state, its handlers
// (`listen`: the query, cardFirstStep, submitCard, submitPin, submitOtp), the main steps (`run`:
// charge, PIN/OTP, 3DS, finish), then helpers.
import { condition, setHandler } from '@temporalio/workflow';
import {
  CARD_FINAL_STATUSES,
  cardFirstStepUpdate,
  cardPaymentStateQuery,
  submitCardUpdate,
  submitOtpUpdate,
  submitPinUpdate,
  type CardPaymentInput,
  type CardPaymentState,
  type CardPaymentStatus,
} from '../shared/card-payment';
import { isClaimHandle, type SealedCard } from '../shared/claim-check';
import { PAYMENT_DEFAULTS, type TransactionLookup } from '../shared/payment-common';
import { PaymentFlow, expectedPayment } from './steps/payment-flow';
import { fromLookup, lookup, secretUnavailable, sendPayment, sends, settleCodeFailure } from './steps/payment-steps';

const WAITING: CardPaymentStatus[] = ['awaiting_pin', 'awaiting_otp'];
const PIN_WORDS = { code: 'PIN', payment: 'payment', again: 'the PIN again, or the OTP if the payer received one' };
const OTP_WORDS = { code: 'OTP', payment: 'payment', again: 'the OTP again' };

export async function cardPaymentWorkflow(input: CardPaymentInput): Promise<CardPaymentState> {
  return new CardPaymentFlow(input).run();
}

class CardPaymentFlow extends PaymentFlow<CardPaymentState> {
  // --- state ---

  /** The sealed card the card charge (B1) sends (a new one after submitCard). */
  private card: SealedCard;
  /** The card submitted again while awaiting_card, not yet taken. */
  private resubmittedCard: SealedCard | undefined;
  /** A PIN/OTP is with the service. */
  private busy = false;
  /** The PIN may have been accepted (its answer was lost): an OTP is accepted too. */
  private pinAnswerLost = false;
  /**
   * The card charge (B1) or the authorization (B2) answered Success: the final verify need not wait for the webhook.
   */
  private answeredSuccess = false;
  /** The record the activity read right after that Success answer (absent when it could not). */
  private readAfterSuccess: TransactionLookup | undefined;

  constructor(private readonly input: CardPaymentInput) {
    super(
      input.transactionRef,
      expectedPayment(input),
      {
        transactionRef: input.transactionRef,
        status: 'charging',
        amount: input.amount,
        currency: input.currency,
        webhooksReceived: 0,
        refusedCodes: 0,
        card: { bin: input.card.bin, last4: input.card.last4, brand: input.card.brand },
      },
      CARD_FINAL_STATUSES,
    );
    this.card = input.card;
    this.pending = { as: 'unknown', reason: 'verified as Pending after the service answered Success' };
  }

  override snapshot(): CardPaymentState {
    const { status } = this.state;
    return {
      ...super.snapshot(),
      expects:
        status === 'awaiting_pin'
          ? this.pinAnswerLost
            ? 'pin_or_otp'
            : 'pin'
          : status === 'awaiting_otp'
            ? 'otp'
            : undefined,
    };
  }

  // --- handlers ---

  private listen(): void {
    setHandler(cardPaymentStateQuery, () => this.snapshot());
    setHandler(cardFirstStepUpdate, async () => {
      await condition(() => this.state.status !== 'charging');
      return this.snapshot();
    });
    setHandler(submitCardUpdate, (c) => this.submitCard(c), { validator: (c) => this.checkCard(c) });
    setHandler(submitPinUpdate, (pin) => this.authorize('pin', pin), {
      validator: (pin) => this.checkCode('pin', pin),
    });
    setHandler(submitOtpUpdate, (otp) => this.authorize('otp', otp), {
      validator: (otp) => this.checkCode('otp', otp),
    });
  }

  /** submitCard (Update): the card again, taken by the charge loop; answers the state after its send. */
  private async submitCard(c: SealedCard): Promise<CardPaymentState> {
    this.resubmittedCard = c;
    await condition(() => this.state.status !== 'awaiting_card' && this.state.status !== 'charging');
    return this.snapshot();
  }

  private checkCard(c: SealedCard): void {
    if (this.state.status !== 'awaiting_card' || this.resubmittedCard)
      throw new Error(`no card is expected now (state ${this.state.status})`);
    if (!c || !isClaimHandle(c.handle))
      throw new Error('card must be sealed: pass the claim-check handle the starter made');
  }

  private checkCode(kind: 'pin' | 'otp', handle: string): void {
    const { status } = this.state;
    const expected =
      kind === 'pin'
        ? status === 'awaiting_pin'
        : status === 'awaiting_otp' || (status === 'awaiting_pin' && this.pinAnswerLost);
    const name = kind === 'pin' ? 'PIN' : 'OTP';
    if (!expected || this.busy)
      throw new Error(`no ${name} is expected now (state ${status}${this.busy ? ', a code is being checked' : ''})`);
    if (!isClaimHandle(handle)) throw new Error(`${kind} must be sealed: pass the claim-check handle the starter made`);
  }

  /**
   * submitPin / submitOtp (Update): the authorization (B2) with the sealed code; a refusal or a lost answer is settled
   * by verify.
   */
  private async authorize(kind: 'pin' | 'otp', handle: string): Promise<CardPaymentState> {
    this.busy = true;
    try {
      const step = await sends.authorizeCard(this.ref, kind, handle);
      this.pinAnswerLost = false;
      this.applyStep(step.transactionStatus, step.verified);
      return this.snapshot();
    } catch (err) {
      const words = kind === 'pin' ? PIN_WORDS : OTP_WORDS;
      // A PIN whose answer was lost may have been accepted: an OTP is accepted next too.
      const onLost = () => {
        if (kind === 'pin') this.pinAnswerLost = true;
      };
      await settleCodeFailure(this.ref, err, this.expected, this, words, onLost);
      return this.snapshot();
    } finally {
      this.busy = false;
    }
  }

  // --- main steps ---

  async run(): Promise<CardPaymentState> {
    this.listen();
    this.publish('card', this.input);
    return this.recordOutcomeOnCancel(async () => {
      await this.charge();
      await this.awaitCodes();
      await this.awaitThreeDs();
      // The service answered Success (the card charge (B1) or the authorization (B2)): verify now; its webhook adds
      // nothing after that.
      return this.answeredSuccess
        ? this.finish(0, this.readAfterSuccess)
        : this.finish(this.input.webhookGraceMs ?? PAYMENT_DEFAULTS.webhookGraceMs);
    });
  }

  /** The card charge (B1): sent once; a second time only when verify proved the first never arrived. */
  private async charge(): Promise<void> {
    let sent = await this.sendCharge();
    while (sent.outcome === 'answered' && sent.answer === 'secret-unavailable') {
      // The sealed card expired (e.g. the worker was down past its TTL): ask for it again.
      if (!(await this.awaitCardAgain())) break;
      sent = await this.sendCharge();
    }
    this.readSent(
      sent,
      { answer: "the charge's", request: 'the charge' },
      {
        answered: (answer) => {
          // 'secret-unavailable' here: ended as expired, no card came again.
          if (answer === 'secret-unavailable') return;
          this.state.authUrl = answer.authUrl;
          this.applyStep(answer.transactionStatus, answer.verified);
        },
        pending: (lost) => {
          // The transaction exists but its step (PIN, OTP or 3DS) is unknown to us. Pending is not
          // failed: the payer may still complete it at the service. Verify decides at the end; still
          // Pending then, the flow parks (verified again on a backoff, or an operator resolves it).
          this.setStatus('confirming', `the charge's answer was lost (${lost})`);
          this.pending = {
            as: 'unknown',
            reason: "the charge's answer was lost and verify still shows the transaction as Pending",
          };
        },
      },
    );
  }

  /** PIN / OTP: each step with its own deadline; at a deadline verify decides (expired if still pending). */
  private async awaitCodes(): Promise<void> {
    let stepOf: CardPaymentStatus | undefined;
    let deadline = 0;
    while (WAITING.includes(this.state.status)) {
      const current = this.state.status;
      const timeoutMs =
        current === 'awaiting_pin'
          ? (this.input.pinTimeoutMs ?? PAYMENT_DEFAULTS.pinTimeoutMs)
          : (this.input.otpTimeoutMs ?? PAYMENT_DEFAULTS.otpTimeoutMs);
      if (stepOf !== current) {
        stepOf = current;
        deadline = Date.now() + timeoutMs;
      }
      const moved = await condition(
        () => this.state.status !== current || this.inbox.event !== undefined,
        Math.max(deadline - Date.now(), 1),
      );
      if (this.inbox.event && WAITING.includes(this.state.status)) {
        this.setStatus('confirming'); // paid (e.g. the OTP's answer is still on its way): the webhook decides
        break;
      }
      if (moved) continue;
      if (this.busy) {
        await condition(() => !this.busy); // a code in flight decides first
        continue;
      }
      // A deadline is not proof: the payer may have completed the step elsewhere. Verify decides.
      const lapsed = `no ${current === 'awaiting_pin' ? 'PIN' : 'OTP'} within ${timeoutMs} ms`;
      this.pending = { as: 'expired', reason: lapsed };
      this.setStatus('confirming', lapsed);
    }
  }

  /** 3DS: the payer completes auth_url; the webhook or a requery confirms. */
  private async awaitThreeDs(): Promise<void> {
    if (this.state.status !== 'awaiting_3ds') return;
    const timeoutMs = this.input.threeDsTimeoutMs ?? PAYMENT_DEFAULTS.threeDsTimeoutMs;
    const pollMs = this.input.threeDsPollMs ?? PAYMENT_DEFAULTS.threeDsPollMs;
    const until = Date.now() + timeoutMs;
    while (!this.inbox.event && this.state.status === 'awaiting_3ds') {
      const left = until - Date.now();
      if (await condition(() => this.inbox.event !== undefined, Math.max(Math.min(left, pollMs), 1))) break;
      const found = await lookup(this.ref);
      if (found?.found && found.status === 'Success') this.setStatus('confirming');
      else if (found?.found && found.status !== 'Pending') this.conclude(fromLookup(found, this.expected));
      else if (Date.now() >= until) {
        this.pending = { as: 'expired', reason: `3DS not completed within ${timeoutMs} ms` };
        this.setStatus('confirming', this.pending.reason);
      }
    }
    if (this.inbox.event && this.state.status === 'awaiting_3ds') this.setStatus('confirming');
  }

  // --- helpers ---

  /** The card charge (B1) with the current sealed card; a card that no longer opens means this send was not made. */
  private sendCharge() {
    return sendPayment(this.ref, () =>
      sends.chargeCard({ ...this.input, card: this.card }).catch((err: unknown) => {
        if (secretUnavailable(err)) return 'secret-unavailable' as const;
        throw err;
      }),
    );
  }

  /** awaiting_card: true when the card came again (the flow charges it), false when it did not in time (expired). */
  private async awaitCardAgain(): Promise<boolean> {
    const timeoutMs = this.input.cardTimeoutMs ?? this.input.pinTimeoutMs ?? PAYMENT_DEFAULTS.pinTimeoutMs;
    this.setStatus('awaiting_card', 'the sealed card expired before it was sent: submit the card again');
    if (!(await condition(() => this.resubmittedCard !== undefined, timeoutMs))) {
      this.setStatus('expired', `the card was not submitted again within ${timeoutMs} ms`);
      return false;
    }
    this.card = this.resubmittedCard!;
    this.resubmittedCard = undefined;
    this.state.card = { bin: this.card.bin, last4: this.card.last4, brand: this.card.brand };
    this.setStatus('charging');
    return true;
  }

  /**
   * The service's step answer. Anything but a known step goes to confirmation: never "failed" on an unexpected word.
   */
  private applyStep(s: string, verified?: TransactionLookup): void {
    if (s === 'ValidatePin') this.setStatus('awaiting_pin');
    else if (s === 'ValidateOTP') this.setStatus('awaiting_otp');
    else if (s === 'ThreeDSecure') this.setStatus('awaiting_3ds');
    else {
      if (s === 'Success') [this.answeredSuccess, this.readAfterSuccess] = [true, verified];
      this.setStatus('confirming', s === 'Success' ? undefined : `the service answered ${s}`);
    }
  }
}
