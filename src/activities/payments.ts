// Activities of the card, bank, USSD, hosted checkout and recurring flows.
//
// Money-moving calls (B1 charge, B2 authorize, B3 debit, B4 validate, B5 USSD, A1 initiate,
// A4 token charge) are proxied with one attempt and every failure is typed (toActivityFailure):
// a refusal (BadRequest, InvalidRequest, Unauthorized, NotFound) proves nothing happened; anything
// else is an unknown outcome that the workflow settles by verifying the reference first.
// Reads (verify, A5 cancel, which is idempotent) may be retried by their retry policy.
//
// Nothing here logs a request body: card data, PIN, OTP and bank codes pass through the API
// client and are never logged; only references and statuses are.
import { ApplicationFailure } from '@temporalio/activity';
import {
  BadRequestError,
  isDocumentedNotFound,
  type CheckoutInitiateRequest,
  type DirectChargeBankRequest,
  type DirectChargeCardRequest,
  type DirectInitiateUssdRequest,
} from '../api';
import type { ActivityDeps } from './deps';
import type { CardDetails, CardPaymentInput } from '../shared/card';
import { withSealed } from './claim-check';
import { heartbeatWhile } from './heartbeat';
import type { BankPaymentInput, UssdPaymentInput } from '../shared/bank-ussd';
import type { CheckoutInput } from '../shared/checkout';
import type { TransactionLookup, VerifiedStatus } from '../shared/payment-common';
import { toActivityFailure } from './failures';

export interface CardStepResult {
  /** ValidatePin, ValidateOTP, ThreeDSecure or Success (anything else is settled by verify). */
  transactionStatus: string;
  authUrl?: string;
}

export function createPaymentActivities({ api, logger, claimCheck }: ActivityDeps) {
  return {
    /** B1 with the sealed card (redeemed here, deleted once the service answered). Money-moving: one attempt. */
    async chargeCard(input: CardPaymentInput): Promise<CardStepResult> {
      try {
        const { data } = await withSealed(claimCheck, input.card.handle, 'card', (card: CardDetails) =>
          heartbeatWhile(
            api.direct.chargeCard({
              transaction_reference: input.transactionRef,
              amount: input.amount,
              currency: input.currency,
              pass_charge: input.passCharge,
              redirect_url: input.redirectUrl,
              customer: { name: input.customer.name, email: input.customer.email },
              card: {
                number: card.number,
                cvv: card.cvv,
                expiry_month: card.expiryMonth,
                expiry_year: card.expiryYear,
              },
            } satisfies DirectChargeCardRequest),
          ),
        );
        const status = data.transaction_status ?? 'unknown';
        logger.info({ transactionRef: input.transactionRef, status }, 'card charge answered');
        return { transactionStatus: status, authUrl: data.auth_url ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'charge card' });
      }
    },

    /** B2 with a sealed PIN or OTP (the handle from the Update). Money-moving: one attempt. */
    async authorizeCard(transactionRef: string, step: 'pin' | 'otp', handle: string): Promise<CardStepResult> {
      try {
        const { data } = await withSealed(claimCheck, handle, step, (code: string) =>
          heartbeatWhile(
            api.direct.authorizeCard({
              transaction_reference: transactionRef,
              authorization: step === 'pin' ? { pin: code } : { otp: code },
            }),
          ),
        );
        const status = data.transaction_status ?? 'unknown';
        logger.info({ transactionRef, status, step }, 'card authorization answered');
        return { transactionStatus: status };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'authorize card payment' });
      }
    },

    /** B3. Money-moving: one attempt. */
    async chargeBank(input: BankPaymentInput): Promise<{ authModel?: string }> {
      const req: DirectChargeBankRequest = {
        transaction_reference: input.transactionRef,
        amount: input.amount,
        currency: input.currency,
        pass_charge: input.passCharge,
        bank: { bank_code: input.bank.bankCode, account_or_phoneno: input.bank.accountOrPhone },
        customer: { name: input.customer.name, email: input.customer.email },
      };
      try {
        const { data } = await heartbeatWhile(api.direct.chargeBank(req));
        logger.info({ transactionRef: input.transactionRef, authModel: data.auth_model }, 'bank debit answered');
        return { authModel: data.auth_model ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'bank debit' });
      }
    },

    /** B4 with the payer's sealed token or OTP (the handle from the Update). Money-moving: one attempt. */
    async validateBank(
      transactionRef: string,
      handle: string,
    ): Promise<{ authModel?: string; transactionStatus?: string }> {
      try {
        const { data } = await withSealed(claimCheck, handle, 'bank-code', (code: string) =>
          heartbeatWhile(
            api.direct.validateBank({ transaction_reference: transactionRef, authorization: { otp_token: code } }),
          ),
        );
        logger.info({ transactionRef, status: data.transaction_status }, 'bank validation answered');
        return { authModel: data.auth_model ?? undefined, transactionStatus: data.transaction_status ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'validate bank payment' });
      }
    },

    /** B5. Creates the transaction: one attempt, settled by verify when the answer is lost. */
    async initiateUssd(input: UssdPaymentInput): Promise<{ ussdCode: string; expiresAt?: string }> {
      const req: DirectInitiateUssdRequest = {
        transaction_reference: input.transactionRef,
        amount: input.amount,
        currency: input.currency,
        pass_charge: input.passCharge,
        ussd: { bank_code: input.bankCode as DirectInitiateUssdRequest['ussd']['bank_code'] },
        customer: { name: input.customer.name, email: input.customer.email },
      };
      try {
        const { data } = await heartbeatWhile(api.direct.initiateUssd(req));
        const code = data.ussd_details?.ussd_reference;
        if (!code)
          throw ApplicationFailure.create({
            type: 'OutcomeUnknown',
            message: 'B5 answered without ussd_details.ussd_reference',
            nonRetryable: true,
          });
        logger.info({ transactionRef: input.transactionRef }, 'USSD code issued');
        return { ussdCode: code, expiresAt: data.ussd_details?.expiresAt ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'initiate USSD' });
      }
    },

    /** A1 (+A3). Creates the transaction: one attempt, settled by verify when the answer is lost. */
    async initiateCheckout(input: CheckoutInput): Promise<{ checkoutUrl: string }> {
      const req: CheckoutInitiateRequest = {
        amount: input.amount,
        email: input.email,
        currency: input.currency,
        initiate_type: 'inline',
        transaction_ref: input.transactionRef,
        customer_name: input.customerName,
        callback_url: input.callbackUrl,
        payment_channels: input.channels,
        metadata: input.metadata,
        pass_charge: input.passCharge,
        sub_merchant_id: input.subMerchantId,
        is_recurring: input.isRecurring,
      };
      try {
        const { data } = await heartbeatWhile(api.checkout.initiate(req));
        logger.info({ transactionRef: input.transactionRef }, 'checkout initiated');
        return { checkoutUrl: data.checkout_url };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'initiate checkout' });
      }
    },

    /** A4. Money-moving: one attempt; the workflow verifies the reference first and after an unknown outcome. */
    async chargeToken(req: {
      tokenId: string;
      amount: number;
      reference: string;
    }): Promise<{ transactionStatus?: string }> {
      try {
        const { data } = await heartbeatWhile(
          api.tokens.charge({ amount: req.amount, token_id: req.tokenId, transaction_ref: req.reference }),
        );
        logger.info({ transactionRef: req.reference, status: data.transaction_status }, 'token charge answered');
        return { transactionStatus: data.transaction_status ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: `charge token for ${req.reference}` });
      }
    },

    /** A5. true when cancelled now, false when the service refused ('Recurring Payment was not cancelled': already cancelled or unknown). */
    async cancelToken(tokenId: string): Promise<boolean> {
      try {
        const { data } = await api.tokens.cancel({ auth_code: [tokenId] });
        return data.auth_code.includes(tokenId);
      } catch (err) {
        if (err instanceof BadRequestError) return false;
        throw toActivityFailure(err, { moneyMoving: false, what: 'cancel token' });
      }
    },

    /** Verify one transaction by reference: its status, or found=false only for the documented not-found (src/api/not-found.ts). */
    async lookupTransaction(transactionRef: string): Promise<TransactionLookup> {
      try {
        const { data } = await api.transactions.verify({ transaction_ref: transactionRef });
        const d = data as typeof data & { failure_reason?: unknown };
        return {
          found: true,
          status: data.transaction_status as VerifiedStatus,
          amount: data.transaction_amount ?? undefined,
          merchantAmount: data.merchant_amount ?? undefined,
          currency: data.transaction_currency_id ?? undefined,
          transactionType: data.transaction_type ?? undefined,
          reason: typeof d.failure_reason === 'string' ? d.failure_reason : undefined,
        };
      } catch (err) {
        // Only the documented not-found is absence; any other 400 (or 404) is an error, never "not received".
        if (isDocumentedNotFound('verifyTransaction', err)) return { found: false };
        throw toActivityFailure(err, { moneyMoving: false, what: 'verify transaction' });
      }
    },
  };
}

export type PaymentFlowActivities = ReturnType<typeof createPaymentActivities>;
