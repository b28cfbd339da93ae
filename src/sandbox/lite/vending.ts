// Electricity vending (H1-H4): providers, meter lookup, purchase with a token, transactions.
import { randomUUID } from 'node:crypto';
import { fail, ok, randomDigits, requireFields, type SandboxCore } from './core';

export const PROVIDERS = ['IE', 'EKEDC', 'AEDC', 'YEDC', 'BEDC', 'IBEDC', 'KEDCO', 'KAEDC', 'PHED', 'EEDC', 'JED'];

/** Documented test meters: number → customer and meter type. Amounts are whole naira. */
export const TEST_METERS: Record<string, { customer_name: string; meter_type: 'prepaid' | 'postpaid'; minimum_vend: number; outstanding_debt: string }> = {
  '45067198783': { customer_name: 'ADA SANDBOX', meter_type: 'prepaid', minimum_vend: 1000, outstanding_debt: '0.00' },
  '04123456789': { customer_name: 'TUNDE SANDBOX', meter_type: 'postpaid', minimum_vend: 2000, outstanding_debt: '1200.50' },
};

interface Lookup {
  reference: string;
  meterNo: string;
  provider: string;
  meterType: string;
  minimumVend: number;
  customer: string;
}

export function registerVending(core: SandboxCore) {
  const lookups = new Map<string, Lookup>();
  const vends = new Map<string, Record<string, unknown>>();

  core.route('GET', '/vending/utilities/electricity/service-providers', 'default', () =>
    ok(PROVIDERS.map((code) => ({ code, name: `${code} Electricity Distribution`, logo_url: null }))),
  );

  core.route('POST', '/vending/utilities/electricity/lookup', 'default', ({ body }) => {
    const missing = requireFields(body, ['meter_no', 'meter_type', 'provider']);
    if (missing) return missing;
    if (!PROVIDERS.includes(String(body.provider))) return fail(400, 'provider is invalid');
    const meter = TEST_METERS[String(body.meter_no)];
    if (!meter || meter.meter_type !== body.meter_type) return fail(400, 'Invalid meter number');
    const reference = `${Date.now()}${randomDigits(6)}`;
    lookups.set(reference, { reference, meterNo: String(body.meter_no), provider: String(body.provider), meterType: meter.meter_type, minimumVend: meter.minimum_vend, customer: meter.customer_name });
    return ok({
      reference, customer_name: meter.customer_name, minimum_vend: meter.minimum_vend, account_type: 'NON-MD', outstanding_debt: meter.outstanding_debt,
      address: '1 Sandbox Way, Lagos', meter_type: meter.meter_type, provider: body.provider,
    });
  });

  core.route('POST', '/vending/utilities/electricity', 'default', ({ body }) => {
    const missing = requireFields(body, ['reference', 'amount', 'phone_number', 'email']);
    if (missing) return missing;
    const reference = String(body.reference);
    const lookup = lookups.get(reference);
    if (!lookup) return fail(400, 'Invalid reference: look the meter up first');
    if (vends.has(reference)) return fail(400, 'Transaction already processed for this reference');
    const amount = body.amount;
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) return fail(400, 'amount must be a whole number greater than 0');
    if (amount < lookup.minimumVend) return fail(400, `amount is below the minimum vend of ${lookup.minimumVend}`);
    const token = randomDigits(20).replace(/(\d{4})(?=\d)/g, '$1-');
    const now = core.clock.iso();
    const metaJson = { token, amount_paid: `${amount}.00`, meter_number: lookup.meterNo, meter_type: lookup.meterType, provider: lookup.provider, account_name: lookup.customer, total_units: (amount / 60).toFixed(2), reference, transaction_date: now };
    const txn = {
      reference, amount: `${amount}.00`, merchant_amount: `${amount}.00`, phone_number: body.phone_number, email: body.email, merchant_id: 'SBXMERCHANT',
      wallet_batch_id: randomUUID(), value_reference: token, network: null, transaction_id: null, type: 'electricity', action: 'debit', status: 'success',
      meta: JSON.stringify(metaJson), meta_json: metaJson, createdAt: now, updatedAt: now,
    };
    vends.set(reference, txn);
    core.record('vend', reference, `${amount}.00`, 'NGN');
    return ok(txn);
  });

  core.route('GET', '/vending/transactions', 'default', ({ query }) => {
    const reference = query.get('reference');
    if (reference) {
      const txn = vends.get(reference);
      return txn ? ok(txn) : fail(404, 'Transaction not found');
    }
    return ok([...vends.values()]);
  });
}
