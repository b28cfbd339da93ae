// One flow of each kind, ours (through the typed starters) and the baseline's (raw Temporal
// calls to the hand-written workflows), each run to its end and checked.
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { startVend } from '../../src/starters/vending';
import {
  startCardPaymentForStep,
  submitOtp,
  submitPin,
  type CardPaymentRequest,
} from '../../src/starters/card-payment';
import { SANDBOX_OTP, SANDBOX_PIN, TEST_CARDS } from '../../src/sandbox';
import type { BenchStack } from '../lib/stack';
import { BASELINE_QUEUE } from '../lib/stack';

const METER = { meter_no: '45067198783', meter_type: 'prepaid', provider: 'EKEDC' } as const;
const BUYER = { phone_number: '+2348012345678', email: 'bench@example.com' };

export const uid = (prefix: string) => `${prefix}-${randomUUID().slice(0, 18)}`;

export async function oursVend(stack: BenchStack): Promise<string> {
  const handle = await startVend(stack.starters, { order_ref: uid('bv'), ...METER, amount: 1500, ...BUYER });
  const r = await handle.result();
  if (r.status !== 'vended') throw new Error(`our vend ended ${r.status}`);
  return handle.workflowId;
}

export async function baselineVend(stack: BenchStack): Promise<string> {
  const workflowId = uid('bbv');
  const r = await stack.plain.workflow.execute<(i: unknown) => Promise<{ status: string }>>('baselineVend', {
    taskQueue: BASELINE_QUEUE,
    workflowId,
    args: [{ ...METER, amount: 1500, ...BUYER }],
  });
  if (r.status.toLowerCase() !== 'success') throw new Error(`baseline vend ended ${r.status}`);
  return workflowId;
}

export const cardRequest = (number: string, over: Partial<CardPaymentRequest> = {}): CardPaymentRequest => ({
  transactionRef: uid('bc'),
  amount: 500_000,
  currency: 'NGN',
  card: { number, cvv: '123', expiryMonth: '12', expiryYear: '29' },
  customer: { name: 'Bench Payer', email: 'payer@example.com' },
  ...over,
});

/** PIN then OTP through our starters: first step by update-with-start, PIN and OTP as Updates, then the result. */
export async function oursCard(stack: BenchStack): Promise<string> {
  const req = cardRequest(TEST_CARDS.pinThenOtp);
  const { state, handle } = await startCardPaymentForStep(stack.starters, req);
  if (state.status !== 'awaiting_pin') throw new Error(`our card flow's first step was ${state.status}`);
  await submitPin(stack.starters, req.transactionRef, SANDBOX_PIN);
  await submitOtp(stack.starters, req.transactionRef, SANDBOX_OTP);
  const r = await handle.result();
  if (r.status !== 'success') throw new Error(`our card flow ended ${r.status}`);
  return handle.workflowId;
}

export function baselineCardInput(ref: string) {
  return {
    transaction_reference: ref,
    amount: 500_000,
    currency: 'NGN',
    customer: { name: 'Bench Payer', email: 'payer@example.com' },
    card: { number: TEST_CARDS.pinThenOtp, cvv: '123', expiry_month: '12', expiry_year: '29' },
  };
}

export async function baselineCard(stack: BenchStack): Promise<string> {
  const ref = uid('bbc');
  const startOp = new WithStartWorkflowOperation<Workflow>('baselineCard', {
    workflowId: ref,
    taskQueue: BASELINE_QUEUE,
    args: [baselineCardInput(ref)],
    workflowIdConflictPolicy: 'FAIL',
  });
  const first = await stack.plain.workflow.executeUpdateWithStart<Workflow, string, []>('firstStep', {
    startWorkflowOperation: startOp,
  });
  if (first !== 'ValidatePin') throw new Error(`baseline card first step ${first}`);
  const handle = await startOp.workflowHandle();
  await handle.executeUpdate<string, [string]>('pin', { args: [SANDBOX_PIN] });
  await handle.executeUpdate<string, [string]>('otp', { args: [SANDBOX_OTP] });
  const r = (await handle.result()) as string;
  if (r !== 'Success') throw new Error(`baseline card verified ${r}`);
  return ref;
}
