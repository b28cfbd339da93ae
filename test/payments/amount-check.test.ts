// The amount check every payment confirmation goes through (amountMismatch): a reported payment is
// ours only in our currency and for our amount; with pass_charge the payer pays amount + charge, so
// merchant_amount must be our amount, and without one only a larger amount can be ours. The
// flows' own tests (underpayment.test.ts, flows-time-skipping.test.ts) drive it through the
// workflows; here each rule is held to its exact answer.
import { amountMismatch, type ExpectedPayment } from '../../src/shared/payment-common';

const plain: ExpectedPayment = { amount: 100_000, currency: 'NGN', passCharge: false };
const passCharge: ExpectedPayment = { ...plain, passCharge: true };

describe('amountMismatch', () => {
  it('accepts our amount in our currency, in any letter case, and a report without an amount', () => {
    expect(amountMismatch(plain, { amount: 100_000, currency: 'NGN' })).toBeUndefined();
    expect(amountMismatch(plain, { amount: 100_000, currency: 'ngn' })).toBeUndefined();
    expect(amountMismatch(plain, { amount: 100_000 })).toBeUndefined();
    expect(amountMismatch(plain, {})).toBeUndefined();
  });

  it('refuses another currency before looking at the amount', () => {
    expect(amountMismatch(plain, { amount: 100_000, currency: 'USD' })).toBe('currency USD differs from NGN');
    expect(amountMismatch(passCharge, { amount: 100_000, merchantAmount: 100_000, currency: 'usd' })).toBe(
      'currency usd differs from NGN',
    );
  });

  it('without pass_charge, any other amount is refused, more or less', () => {
    expect(amountMismatch(plain, { amount: 99_999, currency: 'NGN' })).toBe('amount 99999 differs from 100000');
    expect(amountMismatch(plain, { amount: 100_001, currency: 'NGN' })).toBe('amount 100001 differs from 100000');
    // merchant_amount counts only with pass_charge.
    expect(amountMismatch(plain, { amount: 101_500, merchantAmount: 100_000 })).toBe(
      'amount 101500 differs from 100000',
    );
  });

  it('with pass_charge, a larger amount is ours when merchant_amount is our amount or absent', () => {
    expect(amountMismatch(passCharge, { amount: 101_500, merchantAmount: 100_000, currency: 'NGN' })).toBeUndefined();
    expect(amountMismatch(passCharge, { amount: 101_500, currency: 'NGN' })).toBeUndefined();
    expect(amountMismatch(passCharge, { amount: 100_000, currency: 'NGN' })).toBeUndefined();
  });

  it('with pass_charge, a larger amount whose merchant_amount is not ours is refused', () => {
    expect(amountMismatch(passCharge, { amount: 101_500, merchantAmount: 99_000 })).toBe(
      'merchant_amount 99000 differs from 100000',
    );
  });

  it('with pass_charge, an underpayment is refused whatever merchant_amount says or omits', () => {
    expect(amountMismatch(passCharge, { amount: 99_000 })).toBe('amount 99000 differs from 100000');
    expect(amountMismatch(passCharge, { amount: 99_000, merchantAmount: 98_000 })).toBe(
      'amount 99000 differs from 100000',
    );
    // merchant_amount equal to ours is believed even on a smaller amount (the service's own split).
    expect(amountMismatch(passCharge, { amount: 99_000, merchantAmount: 100_000 })).toBeUndefined();
  });
});
