// Virtual-account credit: the harness opens an account (C1) and a transfer arrives (C9
// simulate); the sandbox sends E-2 to the webhook receiver, which starts the credit flow.
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  virtualAccountCreditWorkflowId,
  type VirtualAccountCreditOutcome,
} from '../../src/shared/virtual-account-credit';
import { retry } from '../util';
import { awaitResult, type KindDriver, type Outcome } from './types';

/**
 * Credit flow status → money (ledger `va_credit`, which C9 always records):
 *  credited  — this run recorded the credit        → money (matches the ledger)
 *  duplicate — the reference was credited before   → money (the earlier run credited it)
 *  frozen    — recorded, the service holds the funds → money (at the service, recorded here)
 * No flow for the reference by the end → the credit was never given: lost. A credit whose every
 * notification failed is started by the error-log sweep (a Schedule every 30 s in the chaos stack).
 */
export const vaCreditOutcome = (status: string): Outcome =>
  ['credited', 'duplicate', 'frozen'].includes(status) ? 'money' : 'unknown';

function findReference(data: unknown): string | undefined {
  const rows = Array.isArray(data)
    ? data
    : data && typeof data === 'object'
      ? Object.values(data).find(Array.isArray)
      : undefined;
  const row = (rows as { transaction_reference?: string }[] | undefined)?.[0];
  return row?.transaction_reference;
}

export const vaCreditDriver: KindDriver = {
  kind: 'va-credit',
  ledgerKinds: ['va_credit'],
  async run(ctx, flow) {
    flow.variant = 'transfer-in';
    const id = flow.ref.replace(/[^A-Za-z0-9]/g, '');
    const account = await retry('C1', ctx.deadline, async () => {
      try {
        return (
          await ctx.api.virtualAccounts.createCustomer({
            customer_identifier: id,
            first_name: 'Chaos',
            last_name: 'Customer',
            mobile_num: `080${ctx.rng.digits(8)}`,
            bvn: `1${ctx.rng.digits(10)}`,
            dob: '01/15/1990',
            gender: '1',
            address: '1 Test Street',
          })
        ).data;
      } catch (err) {
        if (/already exists/i.test((err as Error).message))
          return (await ctx.api.virtualAccounts.accountByCustomerIdentifier({ customer_identifier: id })).data;
        throw err;
      }
    });
    const amount = `${ctx.rng.int(5, 90) * 100}.00`;
    // C9 is not idempotent: sent once; a lost answer would be the harness's own double.
    await ctx.api.virtualAccounts.simulatePayment({ virtual_account_number: account.virtual_account_number, amount });
    const reference = await retry('C3', ctx.deadline, async () => {
      const ref = findReference((await ctx.api.virtualAccounts.customerTransactions({ customer_identifier: id })).data);
      if (!ref) throw new Error('no credit listed yet');
      return ref;
    });
    flow.workflowId = virtualAccountCreditWorkflowId(reference);
    flow.expectations.push({ reference, ledgerKind: 'va_credit', outcome: 'no-money', status: 'never_started' });
    const result = await awaitResult<VirtualAccountCreditOutcome>(
      ctx,
      () => ctx.starters.client.workflow.getHandle(flow.workflowId!),
      flow,
    ).catch((err: unknown) => {
      if (err instanceof Error && (err as { last?: unknown }).last instanceof WorkflowNotFoundError) return undefined;
      throw err;
    });
    if (!result) {
      flow.status = 'never_started';
      return;
    }
    flow.closed = true;
    flow.status = result.status;
    flow.expectations = [
      { reference, ledgerKind: 'va_credit', outcome: vaCreditOutcome(result.status), status: result.status },
    ];
  },
};
