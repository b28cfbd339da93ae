// A mandate's approval (first run only): the input checked, the mandate created at the service (D1,
// through send-once, requeried by the mandate list (D5) by merchant_ref), then the customer's OTP awaited as an Update
// (the OTP validation, D2; the OTP resend (D6) sends a new one, on request or after an expired session) until the OTP
// timeout. The BVN and the OTP never reach the workflow: the input carries the BVN's claim-check handle and
// the OTP Update a handle; the mandate create and the OTP validation redeem them.
import { condition, setHandler } from '@temporalio/workflow';
import type { CreatedMandate, MandateSnapshot } from '../../activities/mandate';
import {
  mandateInputProblems,
  resendMandateOtpUpdate,
  sealedBvnProblems,
  submitMandateOtpUpdate,
  type MandateState,
} from '../../shared/mandate';
import { isClaimHandle, SECRET_UNAVAILABLE } from '../../shared/claim-check';
import { FailureTypes, failureMessage, failureOf } from '../../shared/failures';
import { sendOnce, type Presence, type SendOnceResult } from '../steps/send-once';
import { money, once, reads } from './proxies';
import type { MandateCancellation } from './cancellation';
import { refusal, type MandateLedger } from './ledger';

/** How long the customer has for the OTP when the input names no otpTimeoutMs. */
const OTP_WAIT_DEFAULT_MS = 15 * 60 * 1000;
/** An expired OTP session is answered with a new OTP twice (unless the input names maxSessionResends). */
const SESSION_RESENDS_DEFAULT = 2;
const MAX_MANUAL_OTP_RESENDS = 5;
/**
 * A mandate create (D1) failure that proves nothing either way (a lost answer): anything else refused the first send.
 */
const UNCLEAR: readonly string[] = [FailureTypes.OutcomeUnknown, FailureTypes.Transient];

export class MandateApproval {
  private sessionToken: string | undefined;
  private sessionResends = 0;
  private manualResends = 0;

  constructor(
    private readonly ledger: MandateLedger,
    private readonly cancellation: MandateCancellation,
  ) {}

  /** Creation (D1) of a valid input; false when the flow ends here. */
  async start(): Promise<boolean> {
    const { ledger } = this;
    ledger.announce();
    const problems = [...mandateInputProblems(ledger.input), ...sealedBvnProblems(ledger.input)];
    if (problems.length > 0) {
      ledger.setStatus('failed', `invalid input: ${problems.join('; ')}`);
      return false;
    }
    return this.create();
  }

  /**
   * The mandate create (D1) through send-once, requeried by the mandate list (D5) by merchant_ref (our mandateRef). A
   * mandate found after a lost answer cannot be approved (its session token went with the answer): it is cancelled at
   * the service and the flow fails, asking for a new mandate.
   */
  private async create(): Promise<boolean> {
    const { ledger } = this;
    const { state, input } = ledger;
    const result: SendOnceResult<CreatedMandate, MandateSnapshot> = await sendOnce({
      send: () => money.createMandate(input),
      requery: async (): Promise<Presence<MandateSnapshot>> => {
        const found = await reads.findMandateByRef(input.mandateRef);
        return found ? { found: true, record: found } : { found: false };
      },
      // Anything but a lost answer is a refusal of the first send (an expired sealed BVN included: nothing was sent).
      isRefusal: (err) => {
        const type = failureOf(err)?.type;
        return type != null && !UNCLEAR.includes(type);
      },
      settleMs: ledger.settings.debitSettleMs,
    });
    switch (result.outcome) {
      case 'answered':
        state.mandateId = result.answer.mandateId;
        this.sessionToken = result.answer.sessionToken;
        return true;
      case 'refused':
        // The sealed BVN expired (e.g. no worker ran within its TTL) before the mandate create (D1) was sent: no
        // mandate exists at the service. Ending says so; a silent wait would block the customer.
        ledger.setStatus(
          'failed',
          result.failure.type === SECRET_UNAVAILABLE
            ? 'the sealed BVN expired before the mandate was created (nothing was sent to the service): start the mandate again with the BVN'
            : result.failure.message,
        );
        return false;
      case 'found':
        state.mandateId = result.record.mandateId;
        await this.cancellation.releaseAtService('a lost mandate create (D1) response');
        ledger.setStatus(
          'failed',
          'the creation response was lost; the mandate it created was cancelled at the service; start a new mandate',
        );
        return false;
      case 'never-received':
        ledger.setStatus(
          'failed',
          `the mandate create (D1) went unanswered ${result.sends} times and no mandate exists for ${input.mandateRef} (${result.lost})`,
        );
        return false;
      case 'unverified':
        ledger.setStatus(
          'failed',
          `the mandate create (D1) went unanswered and the lookup failed (${result.lost}); check merchant_ref ${input.mandateRef} before starting again`,
        );
        return false;
    }
  }

  /** The OTP arrives as an Update (submitOtp), until the timeout; true once approved. */
  async awaitOtp(): Promise<boolean> {
    const { ledger } = this;
    const { state, input } = ledger;
    ledger.setStatus('awaiting_otp');
    const otpDeadline = Date.now() + (input.otpTimeoutMs ?? OTP_WAIT_DEFAULT_MS);
    let otpHandlersOpen = false;
    while (state.status === 'awaiting_otp') {
      const remaining = otpDeadline - Date.now();
      if (remaining <= 0) {
        await ledger.exclusive(async () => {
          if (state.status === 'awaiting_otp') ledger.setStatus('expired', 'no OTP before the timeout');
        });
        break;
      }
      const answered = condition(() => state.status !== 'awaiting_otp' || ledger.cancelRequested, remaining);
      if (!otpHandlersOpen) this.openOtpHandlers(); // after the timer's command: see openOtpHandlers
      otpHandlersOpen = true;
      await answered;
      if (ledger.cancelRequested && state.status === 'awaiting_otp') await this.cancellation.onSignal();
    }
    this.sessionToken = undefined;
    if (state.status === 'expired') await this.cancellation.releaseAtService('expiry');
    return state.status === 'approved';
  }

  /**
   * The OTP Updates are registered only once the flow waits for the OTP, after the status upsert and
   * the OTP timer: an OTP that comes earlier waits in the SDK's buffer until then, or is refused at
   * the end of its activation ("No registered handler"; the starter says "not yet"). So its
   * acceptance is recorded after those commands however the SDK hands the jobs over: a history the
   * SDK's query fault made (docs/sdk-update-ordering.md: the OTP handled in an activation after the
   * creation's result, live; before it on replay) replays, and any other history records the same
   * commands as before (an OTP is only ever accepted while the flow waits for it). A continued run
   * is past approval: its OTP handlers only refuse.
   */
  openOtpHandlers(): void {
    setHandler(submitMandateOtpUpdate, async (otp) => this.ledger.exclusive(() => this.submitOtp(otp)), {
      validator: (otp) => this.checkOtp(otp),
    });
    setHandler(resendMandateOtpUpdate, async () => this.ledger.exclusive(() => this.resendOtp()), {
      validator: () => this.checkResend(),
    });
  }

  /**
   * submitMandateOtp (Update, under the lock): the OTP validation (D2); a session expiry sends the OTP resend (D6)
   * (bounded), then ends the mandate expired.
   */
  private async submitOtp(otp: string): Promise<MandateState> {
    const { ledger } = this;
    const { state } = ledger;
    this.requireAwaitingOtp();
    try {
      const r = await once.validateMandateOtp(this.sessionToken!, otp);
      state.mandateReferenceNumber = r.mandateReferenceNumber;
    } catch (err) {
      const failure = failureOf(err);
      // The sealed OTP expired (or was used) before the OTP validation (D2) was sent: nothing was sent, the flow keeps
      // waiting.
      if (failure?.type === SECRET_UNAVAILABLE)
        throw refusal(SECRET_UNAVAILABLE, 'the OTP expired before it was sent: send it again');
      if (failure?.type !== 'SessionExpired')
        throw refusal(failure?.type ?? 'OtpRejected', failure?.message ?? 'The OTP was not accepted.');
      // Inline, not a helper: an extra async step would move the Update's answer by microtask ticks.
      const maxResends = ledger.input.maxSessionResends ?? SESSION_RESENDS_DEFAULT;
      if (this.sessionResends < maxResends) {
        this.sessionResends += 1;
        let resent = false;
        try {
          await reads.resendMandateOtp(this.sessionToken!);
          resent = true;
        } catch (resendErr) {
          ledger.fail(`resend OTP: ${failureMessage(resendErr)}`);
        }
        if (resent) throw refusal('SessionExpired', 'The OTP session expired; a new OTP was sent to the customer.');
      }
      ledger.setStatus(
        'expired',
        this.sessionResends >= maxResends
          ? 'the OTP session expired too often'
          : 'the OTP session expired and no new OTP could be sent',
      );
      throw refusal('SessionExpired', 'The OTP session expired; the mandate has expired.');
    }
    ledger.setStatus('approved');
    return state;
  }

  private requireAwaitingOtp(): void {
    const { status } = this.ledger.state;
    if (status !== 'awaiting_otp') throw refusal('NotAwaitingOtp', `no OTP is expected: the mandate is ${status}`);
  }

  private checkOtp(otp: string): void {
    this.checkAwaitingOtp();
    // The starter checked the format (4 to 8 digits) and sealed it: only a handle enters history.
    if (!isClaimHandle(otp))
      throw new Error('otp must be sealed: pass the claim-check handle the starter made (submitMandateOtp)');
  }

  /** resendMandateOtp (Update, under the lock): the OTP resend (D6) on request. */
  private async resendOtp(): Promise<MandateState> {
    this.requireAwaitingOtp();
    this.manualResends += 1;
    await reads.resendMandateOtp(this.sessionToken!);
    return this.ledger.state;
  }

  private checkResend(): void {
    this.checkAwaitingOtp();
    if (this.manualResends >= MAX_MANUAL_OTP_RESENDS)
      throw new Error(`at most ${MAX_MANUAL_OTP_RESENDS} OTP resends on request`);
  }

  private checkAwaitingOtp(): void {
    const { status } = this.ledger.state;
    if (status !== 'awaiting_otp') throw new Error(`no OTP is expected in state ${status}`);
  }
}
