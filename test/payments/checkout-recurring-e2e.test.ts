// Hosted checkout (by card and by transfer) and recurring charges end to end on the dev server
// against the sandbox: checkout_url at once by update-with-start, webhook confirmation, token
// charges on durable timers with stable references, each in its own workflow, and cancellation.
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { waitForState } from '../../src/starters/payment-common';
import { startCheckout } from '../../src/starters/checkout';
import {
  cancelRecurring,
  firstPaymentCheckoutUrl,
  getCycleChargeState,
  getRecurringState,
  startRecurring,
} from '../../src/starters/recurring';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { testConfig, useServices } from '../support/stack';
import { recordHistory } from '../support/replay';
import { signReturnUrl } from '../../src/config/return-links';
import { payCheckoutByCard, postCheckoutPage } from '../support/sandbox-admin';

const config = testConfig();
const env = useServices(config);
afterEach(() => env.admin.clearFaults());

describe('hosted checkout and recurring charges end to end', () => {
  it('checkout by card: checkout_url comes back at once; metadata, pass_charge and sub_merchant_id are carried; the webhook confirms', async () => {
    const ref = `co-${randomUUID()}`;
    const { checkoutUrl, handle } = await startCheckout(env.services.starters, {
      transactionRef: ref,
      amount: 250_000,
      currency: 'NGN',
      email: 'ada@example.com',
      metadata: { order: 'A-1' },
      passCharge: true,
      subMerchantId: 'SUB-1',
      callbackUrl: `${env.services.webhookUrl}/payments/return`,
    });
    expect(checkoutUrl).toContain(`/checkout/${ref}`);
    expect((await fetch(checkoutUrl)).status).toBe(200);
    await payCheckoutByCard(checkoutUrl);
    const final = await handle.result();
    expect(final).toMatchObject({
      status: 'success',
      confirmedBy: 'webhook',
      transactionType: 'Card',
      meta: { order: 'A-1' },
    });
    expect(final.amountPaid).toBeGreaterThan(250_000); // the payer paid the charge
    expect(await env.admin.ledger(ref)).toHaveLength(1);
    const link = signReturnUrl(`${env.services.webhookUrl}/payments/return`, ref, config.returnLinks);
    expect(await (await fetch(link)).text()).toContain('Status: success');
    await recordHistory(handle, 'checkout-card');
  });

  it('checkout by transfer: the dynamic account is paid through simulate (A2)', async () => {
    const ref = `ct-${randomUUID()}`;
    const { checkoutUrl, handle } = await startCheckout(env.services.starters, {
      transactionRef: ref,
      amount: 180_000,
      currency: 'NGN',
      email: 'ada@example.com',
      channels: ['transfer'],
    });
    const account = (await postCheckoutPage(`${checkoutUrl}/transfer`)).data as {
      virtual_account_number: string;
      amount: number;
    };
    await env.services.api.checkout.simulateTransfer({
      virtual_account_number: account.virtual_account_number,
      amount: account.amount,
    });
    expect(await handle.result()).toMatchObject({
      status: 'success',
      confirmedBy: 'webhook',
      transactionType: 'Transfer',
    });
    expect(await env.admin.ledger(ref)).toHaveLength(1);
  });

  it('a checkout nobody pays expires, verified as such', async () => {
    const ref = `cx-${randomUUID()}`;
    const { handle } = await startCheckout(env.services.starters, {
      transactionRef: ref,
      amount: 100_000,
      currency: 'NGN',
      email: 'ada@example.com',
      expiryMs: 500,
      webhookGraceMs: 0,
    });
    await env.admin.advanceClock(31 * 60 * 1000); // the service's own 30 minutes pass too
    expect(await handle.result()).toMatchObject({
      status: 'expired',
      confirmedBy: 'verify',
      reason: 'verified as Abandoned',
    });
  });

  it("A1's answer lost (503): verify proves it never arrived, A1 is sent once more and checkout_url still comes back; a refused A1 reaches the caller", async () => {
    await env.admin.fault({ method: 'POST', path: '^/transaction/initiate$', kind: 'error5xx', count: 1 });
    const ref = `c5-${randomUUID()}`;
    const { checkoutUrl } = await startCheckout(env.services.starters, {
      transactionRef: ref,
      amount: 100_000,
      currency: 'NGN',
      email: 'ada@example.com',
      expiryMs: 60_000,
    });
    expect(checkoutUrl).toContain(ref);
    expect((await env.admin.requests(ref, '/transaction/initiate')).map((r) => r.status)).toEqual([503, 200]);

    // A reference the service already knows (a payment made outside our flows): A1 is refused.
    const used = `c4-${randomUUID()}`;
    await env.services.api.direct.initiateUssd({
      transaction_reference: used,
      amount: 100_000,
      ussd: { bank_code: '058' },
      customer: { name: 'A', email: 'a@example.com' },
    });
    const refused = await startCheckout(env.services.starters, {
      transactionRef: used,
      amount: 100_000,
      currency: 'NGN',
      email: 'ada@example.com',
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((refused as WorkflowUpdateFailedError).cause?.message)).toContain('Duplicate transaction reference');
    expect(await env.admin.ledger(used)).toHaveLength(0);
  }, 30_000);

  it('recurring: the first payment tokenises; three cycles charge the token with stable references, each in its own workflow; then cancel (A5)', async () => {
    const planRef = `plan-${randomUUID().slice(0, 8)}`;
    const handle = await startRecurring(env.services.starters, {
      planRef,
      amount: 150_000,
      currency: 'NGN',
      email: 'ada@example.com',
      intervalMs: 1_000,
      cyclesPerRun: 2,
    });
    await payCheckoutByCard(await firstPaymentCheckoutUrl(env.services.starters, planRef));
    await waitForState(
      () => getRecurringState(env.services.starters, planRef),
      (s) => s.cycle >= 4,
      { timeoutMs: 30_000 },
    );
    await cancelRecurring(env.services.starters, planRef);
    const final = await handle.result();
    expect(final).toMatchObject({
      status: 'cancelled',
      reason: 'token cancelled (A5)',
      tokenId: expect.stringMatching(/^AUTH_/),
    });
    expect(final.cycle).toBeGreaterThanOrEqual(4);
    const refs = [1, 2, 3, 4].map((n) => `${planRef}-C${n}`);
    expect(final.recentCycles.slice(0, 4)).toMatchObject(
      refs.map((reference) => ({ reference, status: 'success', confirmedBy: 'webhook' })),
    );
    for (const ref of refs) expect(await env.admin.ledger(ref)).toHaveLength(1);
    expect((await env.admin.ledger(refs[1]))[0].kind).toBe('token_charge');
    // Each cycle's webhook found its own workflow (no orphan webhook holders).
    for (const n of [2, 3, 4]) {
      expect(await getCycleChargeState(env.services.starters, planRef, n)).toMatchObject({
        status: 'success',
        charged: true,
        confirmedBy: 'webhook',
        webhooksReceived: 1,
      });
      expect(
        (await env.services.client.workflow.getHandle(paymentWorkflowId(`${planRef}-C${n}`)).describe()).type,
      ).toBe('tokenChargeWorkflow');
    }
    await recordHistory(
      env.services.client.workflow.getHandle(paymentWorkflowId(`${planRef}-C2`)),
      'token-charge-cycle',
    );
    // The plan's last run (continued as new, then cancelled).
    await recordHistory(handle, 'recurring-plan-cancelled');
    // The token is cancelled at the service: charging it again is refused.
    await expect(
      env.services.api.tokens.charge({ amount: 150_000, token_id: final.tokenId!, transaction_ref: `${planRef}-X` }),
    ).rejects.toThrow();
    // continue-as-new kept history bounded: the run that finished is not the first.
    const desc = await handle.describe();
    expect(desc.runId).not.toBe(desc.raw.workflowExecutionInfo?.firstRunId);
  }, 60_000);

  it('recurring: a cycle whose A4 answer is lost is verified, found charged, and never charged twice', async () => {
    const planRef = `plan-${randomUUID().slice(0, 8)}`;
    const handle = await startRecurring(env.services.starters, {
      planRef,
      amount: 120_000,
      currency: 'NGN',
      email: 'ada@example.com',
      intervalMs: 1_000,
      maxCycles: 2,
    });
    const url = await firstPaymentCheckoutUrl(env.services.starters, planRef);
    await env.admin.fault({
      method: 'POST',
      path: '^/transaction/charge_card$',
      kind: 'drop-after-processing',
      count: 1,
    });
    await payCheckoutByCard(url);
    const final = await handle.result();
    expect(final).toMatchObject({ status: 'completed', cycle: 2 });
    expect(final.recentCycles[1]).toMatchObject({ reference: `${planRef}-C2`, status: 'success' });
    expect(await env.admin.requests(`${planRef}-C2`, '/transaction/charge_card')).toMatchObject([
      { status: 'dropped' },
    ]);
    expect(await env.admin.ledger(`${planRef}-C2`)).toHaveLength(1);
  }, 30_000);
});
