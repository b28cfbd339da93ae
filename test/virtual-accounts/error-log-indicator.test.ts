// Issue #27 section 6, transaction_indicator on the VA credit path: the receiver leaves an unsigned
// non-'C' notification unacknowledged, so it lands in the service's webhook error log; the sweep
// reads that row (the service's own record) and must not credit what the row says is not a credit.
import { WebhookErrorLogRowSchema } from '../../src/api/schemas/virtual-accounts';
import { creditFromErrorLogRow } from '../../src/activities/virtual-account-error-log-sweep';

const row = (indicator?: string) =>
  WebhookErrorLogRowSchema.parse({
    id: '6f1c0d4e-0000-4000-8000-000000000001',
    transaction_ref: 'ref-el-1',
    payload: {
      transaction_reference: 'ref-el-1',
      virtual_account_number: '4567891234',
      principal_amount: '5000.00',
      settled_amount: '4975.00',
      fee_charged: '25.00',
      currency: 'NGN',
      customer_identifier: 'CUST-1',
      ...(indicator === undefined ? {} : { transaction_indicator: indicator }),
    },
  });

describe('the error-log sweep reads transaction_indicator', () => {
  it("credits a row marked 'C', and one that does not say", () => {
    for (const r of [row('C'), row()]) {
      const read = creditFromErrorLogRow(r, '2026-11-26T00:00:00.000Z');
      expect(read).toMatchObject({ credit: { transactionReference: 'ref-el-1', principalAmount: '5000.00' } });
    }
  });

  it.each(['D', 'R', 'c'])("never credits a row marked '%s', naming the field", (indicator) => {
    const read = creditFromErrorLogRow(row(indicator), '2026-11-26T00:00:00.000Z');
    expect(read).not.toHaveProperty('credit');
    expect(read).toEqual({ problem: expect.stringContaining('payload.transaction_indicator') });
  });
});
