// The baseline's workflows: the same HTTP calls as our vend and card flows, written the shortest
// way (no validation, no search attributes, no send-once, no webhook wait).
import { condition, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BaselineActivities } from './activities';

const act = proxyActivities<BaselineActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 1 } });

export interface BaselineVendInput {
  meter_no: string;
  meter_type: string;
  provider: string;
  amount: number;
  phone_number: string;
  email: string;
}

export async function baselineVend(input: BaselineVendInput): Promise<{ status: string }> {
  const meter = await act.lookupMeter({
    meter_no: input.meter_no,
    meter_type: input.meter_type,
    provider: input.provider,
  });
  return act.purchase({
    reference: meter.reference,
    amount: input.amount,
    phone_number: input.phone_number,
    email: input.email,
  });
}

export const baselineFirstStep = defineUpdate<string>('firstStep');
export const baselinePin = defineUpdate<string, [string]>('pin');
export const baselineOtp = defineUpdate<string, [string]>('otp');

export async function baselineCard(
  input: { transaction_reference: string } & Record<string, unknown>,
): Promise<string> {
  const ref = input.transaction_reference;
  let step: string | undefined;
  setHandler(baselineFirstStep, async () => {
    await condition(() => step !== undefined);
    return step!;
  });
  setHandler(baselinePin, async (pin) => (step = await act.authorizeCard(ref, { pin })));
  setHandler(baselineOtp, async (otp) => (step = await act.authorizeCard(ref, { otp })));
  step = await act.chargeCard(input);
  await condition(() => step !== 'ValidatePin' && step !== 'ValidateOTP', '10 minutes');
  return act.verify(ref);
}
