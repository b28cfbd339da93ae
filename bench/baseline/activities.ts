// What a merchant's engineer would write without this project: plain activities, one HTTP call
// each with undici, no response validation, no claim check, no logging. The bench's baseline.
import { request } from 'undici';

export interface BaselineConfig {
  baseUrl: string;
  secretKey: string;
}

export function createBaselineActivities(cfg: BaselineConfig) {
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await request(`${cfg.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${cfg.secretKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.body.json()) as { data?: Record<string, unknown> };
    if (res.statusCode >= 400) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
    return json.data ?? {};
  };
  return {
    async lookupMeter(input: { meter_no: string; meter_type: string; provider: string }) {
      return (await call('POST', '/vending/utilities/electricity/lookup', input)) as { reference: string };
    },
    async purchase(input: { reference: string; amount: number; phone_number: string; email: string }) {
      const d = await call('POST', '/vending/utilities/electricity', input);
      return { status: String(d.status ?? d.transaction_status ?? ''), token: d.token as string | undefined };
    },
    async chargeCard(input: Record<string, unknown>) {
      const d = await call('POST', '/transaction/initiate/process-payment', { ...input, payment_method: 'card' });
      return String(d.transaction_status);
    },
    async authorizeCard(ref: string, authorization: { pin?: string; otp?: string }) {
      const d = await call('POST', '/transaction/payment/authorize', { transaction_reference: ref, authorization });
      return String(d.transaction_status);
    },
    async verify(ref: string) {
      const d = await call('GET', `/transaction/verify/${encodeURIComponent(ref)}`);
      return String(d.transaction_status ?? d.status);
    },
  };
}

export type BaselineActivities = ReturnType<typeof createBaselineActivities>;
