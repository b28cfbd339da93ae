// Direct card payment activities: B1 charge and B2 authorize (money-moving: one attempt each,
// every failure typed for the workflow), and verify by reference (a read, retried).
import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityDeps } from './index';
import { toActivityFailure } from './pos';
import type { CardPaymentInput } from '../shared/card';
import type { BankPaymentInput, UssdPaymentInput } from '../shared/bank-ussd';
import type { CheckoutInput } from '../shared/checkout';

export interface CardStepResult {
  transactionStatus: string;
  authUrl?: string;
}

export function createPaymentActivities({ api, logger }: ActivityDeps) {
  return {
    async chargeCard(input: CardPaymentInput): Promise<CardStepResult> {
      try {
        const res = await api.direct.chargeCard({
          transaction_reference: input.transactionRef,
          amount: input.amount,
          currency: input.currency,
          pass_charge: input.passCharge,
          redirect_url: input.redirectUrl,
          customer: input.customer,
          card: { number: input.card.number, cvv: input.card.cvv, expiry_month: input.card.expiryMonth, expiry_year: input.card.expiryYear },
        } as never);
        const data = res.data as { transaction_status: string; auth_url?: string };
        logger.info({ transactionRef: input.transactionRef, status: data.transaction_status }, 'card charged');
        return { transactionStatus: data.transaction_status, authUrl: data.auth_url ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'charge card' });
      }
    },

    async authorizeCard(transactionRef: string, authorization: { pin?: string; otp?: string }): Promise<CardStepResult> {
      try {
        const res = await api.direct.authorizeCard({ transaction_reference: transactionRef, authorization } as never);
        return { transactionStatus: (res.data as { transaction_status: string }).transaction_status };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'authorize card payment' });
      }
    },

    async chargeBank(input: BankPaymentInput): Promise<{ authModel: string }> {
      try {
        const res = await api.direct.chargeBank({
          transaction_reference: input.transactionRef, amount: input.amount, currency: input.currency, pass_charge: input.passCharge,
          bank: { bank_code: input.bank.bankCode, account_or_phoneno: input.bank.accountOrPhone }, customer: input.customer,
        } as never);
        return { authModel: (res.data as { auth_model: string }).auth_model };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'bank debit' });
      }
    },

    async validateBank(transactionRef: string, code: string): Promise<{ authModel?: string }> {
      try {
        const res = await api.direct.validateBank({ transaction_reference: transactionRef, authorization: { otp_token: code } } as never);
        return { authModel: (res.data as { auth_model?: string }).auth_model };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'validate bank payment' });
      }
    },

    async initiateUssd(input: UssdPaymentInput): Promise<{ ussdCode: string; expiresAt: string }> {
      try {
        const res = await api.direct.initiateUssd({
          transaction_reference: input.transactionRef, amount: input.amount, currency: input.currency, pass_charge: input.passCharge,
          ussd: { bank_code: input.bankCode }, customer: input.customer,
        } as never);
        const d = (res.data as { ussd_details: { ussd_reference: string; expiresAt: string } }).ussd_details;
        return { ussdCode: d.ussd_reference, expiresAt: d.expiresAt };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'initiate USSD' });
      }
    },

    /** A1: not money-moving by itself (the payer pays in the modal), but not repeatable: one attempt. */
    async initiateCheckout(input: CheckoutInput): Promise<{ checkoutUrl: string }> {
      try {
        const res = await api.checkout.initiate({
          amount: input.amount, email: input.email, currency: input.currency, initiate_type: 'inline', transaction_ref: input.transactionRef,
          customer_name: input.customerName, callback_url: input.callbackUrl, payment_channels: input.channels, metadata: input.metadata,
          pass_charge: input.passCharge, sub_merchant_id: input.subMerchantId, is_recurring: input.isRecurring,
        } as never);
        return { checkoutUrl: (res.data as { checkout_url: string }).checkout_url };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'initiate checkout' });
      }
    },

    /** A4: money-moving, one attempt; the workflow verifies by reference on an unknown outcome. */
    async chargeToken(req: { tokenId: string; amount: number; reference: string }): Promise<string> {
      try {
        const res = await api.tokens.charge({ amount: req.amount, token_id: req.tokenId, transaction_ref: req.reference });
        return String((res.data as { transaction_status?: string }).transaction_status ?? 'Success');
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: `charge token for ${req.reference}` });
      }
    },

    async cancelToken(tokenId: string): Promise<boolean> {
      try {
        await api.tokens.cancel({ auth_code: [tokenId] });
        return true;
      } catch (err) {
        const failure = toActivityFailure(err, { moneyMoving: false, what: 'cancel token' });
        if (failure.type === 'BadRequest') return false; // 'Recurring Payment was not cancelled': already cancelled or unknown
        throw failure;
      }
    },

    async verifyTransaction(transactionRef: string): Promise<string> {
      try {
        return (await api.transactions.verify({ transaction_ref: transactionRef })).data.transaction_status;
      } catch (err) {
        const failure = toActivityFailure(err, { moneyMoving: false, what: 'verify transaction' });
        throw failure instanceof ApplicationFailure ? failure : ApplicationFailure.create({ message: String(err) });
      }
    },
  };
}
