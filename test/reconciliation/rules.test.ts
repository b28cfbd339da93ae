// Reconciliation's pure rules: the month windows A6 is asked for, the input's field rules, the
// one mapping of statuses to money / no money, the comparison of one reference, and the report's
// CSV. No server.
import {
  ReconcileInputSchema,
  compareTransaction,
  isWithinOneMonth,
  lookupWindowAround,
  ourOutcome,
  previousDayOf,
  serviceOutcome,
  splitIntoMonthWindows,
  type OurTransaction,
  type ReconciliationReport,
  type ServiceTransaction,
} from '../../src/shared/reconciliation';
import { reconciliationCsv, validateReconcileInput } from '../../src/starters/reconciliation';
import { StarterInputError } from '../../src/starters/input-error';

describe('month windows', () => {
  it('splits a range into calendar-month windows that cover it exactly, each within one month', () => {
    expect(splitIntoMonthWindows('2024-01-15', '2024-03-10')).toEqual([
      { start: '2024-01-15', end: '2024-01-31' },
      { start: '2024-02-01', end: '2024-02-29' }, // leap year
      { start: '2024-03-01', end: '2024-03-10' },
    ]);
    expect(splitIntoMonthWindows('2023-02-01', '2023-02-28')).toEqual([{ start: '2023-02-01', end: '2023-02-28' }]);
    expect(splitIntoMonthWindows('2024-05-07', '2024-05-07')).toEqual([{ start: '2024-05-07', end: '2024-05-07' }]);
    expect(splitIntoMonthWindows('2023-12-31', '2024-01-01')).toEqual([
      { start: '2023-12-31', end: '2023-12-31' },
      { start: '2024-01-01', end: '2024-01-01' },
    ]);
  });

  it('a long range: contiguous, no gaps or overlaps, every window accepted by the one-month rule', () => {
    const windows = splitIntoMonthWindows('2021-11-20', '2024-02-03');
    expect(windows).toHaveLength(28);
    expect(windows[0].start).toBe('2021-11-20');
    expect(windows.at(-1)!.end).toBe('2024-02-03');
    for (let i = 0; i < windows.length; i++) {
      expect(isWithinOneMonth(windows[i])).toBe(true);
      if (i > 0) expect(Date.parse(windows[i].start) - Date.parse(windows[i - 1].end)).toBe(24 * 3600 * 1000);
    }
  });

  it('an empty range (from after to) gives no window; bad dates are refused', () => {
    expect(splitIntoMonthWindows('2024-02-02', '2024-02-01')).toEqual([]);
    expect(() => splitIntoMonthWindows('2024-02-30', '2024-03-01')).toThrow(RangeError);
  });

  it('one month means up to the day before the same day next month', () => {
    expect(isWithinOneMonth({ start: '2024-01-15', end: '2024-02-14' })).toBe(true);
    expect(isWithinOneMonth({ start: '2024-01-15', end: '2024-02-15' })).toBe(false);
    expect(isWithinOneMonth({ start: '2024-01-31', end: '2024-02-29' })).toBe(false); // Feb 29 is "one month after" Jan 31
    expect(isWithinOneMonth({ start: '2024-01-31', end: '2024-02-28' })).toBe(true);
    expect(isWithinOneMonth({ start: '2024-03-02', end: '2024-03-01' })).toBe(false);
    expect(isWithinOneMonth({ start: '2024-01-01', end: '2024-03-01' })).toBe(false);
  });

  it('a lookup by reference reads from the day before the flow started, within one month', () => {
    const w = lookupWindowAround(Date.parse('2024-03-31T23:59:00Z'));
    expect(w).toEqual({ start: '2024-03-30', end: '2024-04-29' });
    expect(isWithinOneMonth(w)).toBe(true);
    expect(previousDayOf(Date.parse('2024-03-01T00:30:00Z'))).toBe('2024-02-29');
  });
});

describe('input rules', () => {
  const issues = (input: unknown) => {
    try {
      validateReconcileInput(input);
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(StarterInputError);
      return (err as StarterInputError).issues;
    }
  };

  it('names the field and the rule', () => {
    expect(issues({ from: '2024-02-10', to: '2024-02-01' })).toEqual([{ field: 'from', rule: 'must not be after to' }]);
    expect(issues({ from: '2024-02-01' })).toEqual([{ field: 'to', rule: 'is required (a date YYYY-MM-DD)' }]);
    expect(issues({ from: '2024-02-30', to: '2024-03-01' })).toEqual([
      { field: 'from', rule: 'must be a date YYYY-MM-DD' },
    ]);
    expect(issues({ from: '01/02/2024', to: '2024-03-01' })[0].field).toBe('from');
    expect(issues({ from: '2020-01-01', to: '2024-01-01' })).toEqual([
      { field: 'to', rule: 'must be at most 1098 days after from' },
    ]);
    expect(issues({ previousDay: true, from: '2024-01-01' })).toEqual([
      { field: 'previousDay', rule: 'cannot be combined with from/to' },
    ]);
    expect(issues({ from: '2024-01-01', to: '2024-01-01', perPage: 0 })).toEqual([
      { field: 'perPage', rule: 'must be at least 1' },
    ]);
    expect(issues({ from: '2024-01-01', to: '2024-01-01', currencies: ['EUR'] })).toEqual([
      { field: 'currencies.0', rule: 'must be NGN or USD' },
    ]);
    expect(issues({ from: '2024-01-01', to: '2024-01-01', extra: 1 })[0].field).toBe('(input)');
  });

  it('previousDay becomes yesterday (UTC) at the starter; a good range passes unchanged', () => {
    expect(validateReconcileInput({ previousDay: true }, Date.parse('2024-05-01T10:00:00Z'))).toEqual({
      from: '2024-04-30',
      to: '2024-04-30',
    });
    expect(ReconcileInputSchema.parse({ from: '2024-01-01', to: '2024-12-31', perPage: 50 })).toEqual({
      from: '2024-01-01',
      to: '2024-12-31',
      perPage: 50,
    });
  });
});

describe('statuses → money, one mapping', () => {
  it('our flows', () => {
    expect(ourOutcome('card', 'success').outcome).toBe('money');
    for (const s of ['failed', 'expired', 'cancelled', 'unknown'])
      expect(ourOutcome('checkout', s).outcome).toBe('no_money');
    for (const s of ['awaiting_otp', 'confirming', 'outcome_unknown', undefined])
      expect(ourOutcome('bank', s).outcome).toBe('open');
    expect(ourOutcome('recurring', 'success', 'tokenChargeWorkflow').outcome).toBe('money');
    expect(ourOutcome('recurring', 'completed', 'recurringChargeWorkflow').outcome).toBe('not_a_transaction');
    expect(ourOutcome('mandate-debit', 'success').outcome).toBe('money');
    expect(ourOutcome('mandate-debit', 'pending').outcome).toBe('open');
    // A POS remote request, found by its published request_ref.
    for (const s of ['success', 'success_after_cancel']) expect(ourOutcome('pos-remote', s).outcome).toBe('money');
    for (const s of ['failed', 'cancelled', 'expired', 'rejected', 'not_sent'])
      expect(ourOutcome('pos-remote', s).outcome).toBe('no_money');
    for (const s of ['pending', 'searching', 'outcome_unknown', 'poll_error', 'expired_unobserved'])
      expect(ourOutcome('pos-remote', s).outcome).toBe('open');
    expect(ourOutcome('vend', 'vended').outcome).toBe('not_comparable');
    expect(ourOutcome('pos-refund', 'approved').outcome).toBe('not_comparable');
    expect(ourOutcome('pos-refund-ledger', 'open').outcome).toBe('not_a_transaction');
    expect(ourOutcome('recurring', 'success', 'tokenChargeWorkflow').outcome).toBe('money'); // a Schedule-run charge too
    expect(ourOutcome('unmatched-webhook', 'unmatched').outcome).toBe('not_a_transaction');
    expect(ourOutcome('something-new', 'success').outcome).toBe('not_comparable');
  });

  it('the service', () => {
    expect(serviceOutcome('success')).toBe('money');
    expect(serviceOutcome('Success')).toBe('money');
    expect(serviceOutcome('abandoned')).toBe('no_money');
    expect(serviceOutcome('failed')).toBe('no_money');
    expect(serviceOutcome('pending')).toBe('open');
    expect(serviceOutcome('on-hold')).toBe('not_comparable');
  });
});

describe('comparing one reference', () => {
  const svc = (o: Partial<ServiceTransaction> = {}): ServiceTransaction => ({
    reference: 'R1',
    status: 'success',
    amount: 10_000,
    merchantAmount: 9_880,
    currency: 'NGN',
    createdAt: '2024-05-01T10:00:00.000Z',
    ...o,
  });
  const ours = (o: Partial<OurTransaction> = {}): OurTransaction => ({
    flow: 'card',
    workflowId: 'payment-R1',
    status: 'success',
    amount: 10_000,
    currency: 'NGN',
    closed: true,
    closeTime: '2024-05-01T10:05:00.000Z',
    ...o,
  });

  it('agreement: same amount, or merchant_amount when the payer paid the charge (pass_charge)', () => {
    expect(compareTransaction(svc(), ours())).toEqual({ result: 'matched' });
    expect(compareTransaction(svc({ amount: 10_120, merchantAmount: 10_000 }), ours())).toEqual({ result: 'matched' });
    expect(compareTransaction(svc({ status: 'failed' }), ours({ status: 'failed' }))).toEqual({
      result: 'no_money_both',
    });
    expect(compareTransaction(svc({ status: 'abandoned' }), undefined)).toEqual({ result: 'no_money_both' });
    expect(compareTransaction(svc({ status: 'pending' }), ours({ status: 'awaiting_otp', closed: false }))).toEqual({
      result: 'open',
    });
    expect(compareTransaction(svc(), ours({ status: 'outcome_unknown', closed: false }))).toEqual({ result: 'open' });
  });

  it('amounts and currencies that differ', () => {
    expect(compareTransaction(svc({ amount: 9_000, merchantAmount: 8_892 }), ours())).toMatchObject({
      result: 'finding',
      kind: 'mismatch_amount',
    });
    expect(compareTransaction(svc({ currency: 'USD' }), ours())).toMatchObject({
      result: 'finding',
      kind: 'mismatch_currency',
    });
  });

  it('money at the service and no success here', () => {
    expect(compareTransaction(svc(), undefined)).toMatchObject({
      result: 'finding',
      kind: 'mismatch_money_without_success',
    });
    expect(compareTransaction(svc(), ours({ status: 'failed' }))).toMatchObject({
      result: 'finding',
      kind: 'mismatch_money_without_success',
    });
    // A flow that closed without deciding (terminated while waiting) never recorded a success.
    expect(compareTransaction(svc(), ours({ status: 'awaiting_otp', closed: true }))).toMatchObject({
      result: 'finding',
      kind: 'mismatch_money_without_success',
      detail: expect.stringContaining('closed without a decision'),
    });
  });

  it('a payment that arrived after the flow ended is a late payment (its record or its webhook after the close)', () => {
    expect(
      compareTransaction(svc({ createdAt: '2024-05-01T11:00:00.000Z' }), ours({ status: 'expired' })),
    ).toMatchObject({
      result: 'finding',
      kind: 'late_payment',
      paidEvidenceAt: '2024-05-01T11:00:00.000Z',
    });
    expect(
      compareTransaction(svc(), ours({ status: 'expired', webhookAfterCloseAt: '2024-05-01T10:30:00.000Z' })),
    ).toMatchObject({
      result: 'finding',
      kind: 'late_payment',
      paidEvidenceAt: '2024-05-01T10:30:00.000Z',
      detail: expect.stringContaining('webhook'),
    });
    // A webhook before the close is no evidence of lateness.
    expect(
      compareTransaction(svc(), ours({ status: 'cancelled', webhookAfterCloseAt: '2024-05-01T10:01:00.000Z' })),
    ).toMatchObject({ kind: 'mismatch_money_without_success' });
    // A flow still running cannot be late.
    expect(
      compareTransaction(
        svc({ createdAt: '2024-05-02T00:00:00.000Z' }),
        ours({ status: 'failed', closed: false, closeTime: undefined }),
      ),
    ).toMatchObject({ kind: 'mismatch_money_without_success' });
  });

  it('success here and no money there', () => {
    expect(compareTransaction(svc({ status: 'failed' }), ours())).toMatchObject({
      result: 'finding',
      kind: 'mismatch_success_without_money',
    });
    expect(compareTransaction(svc({ status: 'pending' }), ours())).toMatchObject({
      result: 'finding',
      kind: 'mismatch_success_without_money',
    });
  });

  it('what cannot be compared is said so, never guessed', () => {
    expect(compareTransaction(svc({ status: 'on-hold' }), ours())).toMatchObject({ result: 'not_comparable' });
    expect(compareTransaction(svc(), ours({ flow: 'vend' }))).toMatchObject({ result: 'not_comparable' });
  });
});

describe('CSV', () => {
  it('one line per finding, integers as they are, quotes and formulas made harmless', () => {
    const report = {
      findings: [
        {
          kind: 'mismatch_amount',
          reference: 'R,1',
          window: '2024-05-01..2024-05-31 NGN',
          flow: 'card',
          ourStatus: 'success',
          ourAmount: 10_000,
          serviceStatus: 'success',
          serviceAmount: 9_000,
          detail: 'says "9000"',
        },
        { kind: 'mismatch_money_without_success', reference: '=HYPERLINK("x")', window: 'w', detail: 'd' },
      ],
    } as unknown as ReconciliationReport;
    const lines = reconciliationCsv(report).split('\r\n');
    expect(lines[0]).toBe(
      'kind,reference,window,flow,workflow_id,our_status,our_amount,our_currency,flow_closed_at,service_status,service_amount,service_merchant_amount,service_currency,service_created_at,paid_evidence_at,detail',
    );
    expect(lines[1]).toBe(
      'mismatch_amount,"R,1",2024-05-01..2024-05-31 NGN,card,,success,10000,,,success,9000,,,,,"says ""9000"""',
    );
    expect(lines[2]).toBe(`mismatch_money_without_success,"'=HYPERLINK(""x"")",w,,,,,,,,,,,,,d`);
    expect(lines[3]).toBe('');
  });
});
