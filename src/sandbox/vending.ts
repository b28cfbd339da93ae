// Electricity vending (H): providers (H1), meter lookup with documented test meters (H2),
// purchase with a token, once per lookup reference (H3), vending transactions (H4).
import { randomUUID } from 'node:crypto';
import type { SandboxClock } from './clock';
import { z } from 'zod';
import {
  addRoutes,
  fail,
  inDays,
  MERCHANT_ID,
  ok,
  page,
  randomDigits,
  type Reply,
  type RequestContext,
  type Router,
} from './http';
import type { Ledger } from './ledger';
import { DAYS, EMAIL, identifier, matching, oneOf, PAGING, positiveInteger, type RouteFields } from './validation';

export const PROVIDERS = ['IE', 'EKEDC', 'AEDC', 'YEDC', 'BEDC', 'IBEDC', 'KEDCO', 'KAEDC', 'PHED', 'EEDC', 'JED'];
const LOOKUP_METER_FIELDS: RouteFields = {
  body: z.object({
    meter_no: matching(/^\d{1,20}$/, 'must be a meter number (digits)'),
    meter_type: oneOf(['prepaid', 'postpaid'], 'must be prepaid or postpaid'),
    provider: oneOf(PROVIDERS, 'is invalid'),
  }),
};
const VEND_FIELDS: RouteFields = {
  body: z.object({
    reference: identifier(),
    amount: positiveInteger('must be a whole number of naira greater than 0'),
    phone_number: matching(/^\+?\d{7,15}$/, 'must be a phone number'),
    email: matching(EMAIL, 'must be a valid email'),
  }),
};
const VEND_TRANSACTIONS_FIELDS: RouteFields = {
  query: z.object({ reference: identifier().optional(), ...PAGING, ...DAYS }),
};
const PROVIDER_NAMES: Record<string, string> = {
  IE: 'Ikeja Electric',
  EKEDC: 'Eko Electricity Distribution Company',
  AEDC: 'Abuja Electricity Distribution Company',
  YEDC: 'Yola Electricity Distribution Company',
  BEDC: 'Benin Electricity Distribution Company',
  IBEDC: 'Ibadan Electricity Distribution Company',
  KEDCO: 'Kano Electricity Distribution Company',
  KAEDC: 'Kaduna Electricity Distribution Company',
  PHED: 'Port Harcourt Electricity Distribution',
  EEDC: 'Enugu Electricity Distribution Company',
  JED: 'Jos Electricity Distribution',
};

/** Documented test meters: number → customer and meter type. Amounts are whole naira. */
export const TEST_METERS: Record<
  string,
  {
    customer_name: string;
    meter_type: 'prepaid' | 'postpaid';
    minimum_vend: number;
    outstanding_debt: string;
    address: string;
  }
> = {
  '45067198783': {
    customer_name: 'ADA SANDBOX',
    meter_type: 'prepaid',
    minimum_vend: 1000,
    outstanding_debt: '0.00',
    address: '1 Sandbox Way, Ikeja, Lagos',
  },
  '04123456789': {
    customer_name: 'TUNDE SANDBOX',
    meter_type: 'postpaid',
    minimum_vend: 2000,
    outstanding_debt: '1200.50',
    address: '2 Sandbox Close, Wuse, Abuja',
  },
  // Answers the purchase with status pending (no token yet); completes on the sandbox clock (PENDING_VEND_MS).
  '45067100007': {
    customer_name: 'PENDING SANDBOX',
    meter_type: 'prepaid',
    minimum_vend: 1000,
    outstanding_debt: '0.00',
    address: '7 Slow Lane, Yaba, Lagos',
  },
};
/** The test meter whose purchases are pending first. */
export const PENDING_METER = '45067100007';
/** How long a pending vend takes to complete, on the sandbox clock. */
export const PENDING_VEND_MS = 20_000;
/** The sandbox tariff: naira per kWh, and VAT. */
export const TARIFF_RATE = 60;
export const VAT_RATE = 7.5;

/** A meter looked up: its number, the provider named, and the test meter's customer. */
interface Lookup {
  reference: string;
  meterNo: string;
  provider: string;
  meter: (typeof TEST_METERS)[string];
}

/** The meters looked up and the vends made. */
interface VendingState {
  clock: SandboxClock;
  ledger: Ledger;
  lookups: Map<string, Lookup>;
  vends: Map<string, Record<string, unknown>>; // by reference, in vend order
}

/** The providers (H1). */
const serviceProviders = () => ok(PROVIDERS.map((code) => ({ code, name: PROVIDER_NAMES[code], logo_url: null })));

/** A test meter's customer (H2), kept under a new reference for the purchase. */
function lookupMeter({ clock, lookups }: VendingState, { body }: RequestContext): Reply {
  const meterNo = String(body.meter_no);
  const meter = TEST_METERS[meterNo];
  if (!meter || meter.meter_type !== body.meter_type) return fail(400, 'Invalid meter number');
  const reference = `${clock.now()}${randomDigits(6)}`;
  const provider = String(body.provider);
  lookups.set(reference, { reference, meterNo, provider, meter });
  const { customer_name, minimum_vend, outstanding_debt, address, meter_type } = meter;
  return ok({
    reference,
    customer_name,
    minimum_vend,
    account_type: 'NON-MD',
    outstanding_debt,
    address,
    meter_type,
    provider,
  });
}

/** A vend for a looked-up meter (H3) (the pending test meter gets its token later, on the sandbox clock). */
function vend({ clock, ledger, lookups, vends }: VendingState, { body }: RequestContext): Reply {
  const amount = Number(body.amount);
  const reference = String(body.reference);
  const lookup = lookups.get(reference);
  if (!lookup) return fail(400, 'Invalid reference: look the meter up first');
  if (vends.has(reference)) return fail(400, 'Transaction already processed for this reference');
  const minimum = lookup.meter.minimum_vend;
  if (amount < minimum) return fail(400, `amount is below the minimum vend of ${minimum}`);
  const token = randomDigits(20).replace(/(\d{4})(?=\d)/g, '$1-');
  const now = clock.iso();
  const batch = randomUUID();
  const metaJson = vendMeta(lookup, amount, token, batch, now);
  const pending = lookup.meterNo === PENDING_METER;
  const txn: Record<string, unknown> = {
    reference,
    amount: `${amount}.00`,
    merchant_amount: `${amount}.00`,
    phone_number: String(body.phone_number),
    email: String(body.email),
    merchant_id: MERCHANT_ID,
    wallet_batch_id: batch,
    value_reference: token,
    network: null,
    transaction_id: null,
    type: 'electricity',
    action: 'debit',
    status: 'success',
    meta: JSON.stringify(metaJson),
    meta_json: metaJson,
    createdAt: now,
    updatedAt: now,
  };
  if (pending) {
    // The wallet is debited now; the token comes when the vend completes (the lookup by reference then shows it).
    const final = { ...txn };
    const noToken = { ...metaJson, token: null };
    Object.assign(txn, { status: 'pending', value_reference: null, meta_json: noToken, meta: JSON.stringify(noToken) });
    clock.after(PENDING_VEND_MS, () => {
      Object.assign(txn, final, { updatedAt: clock.iso() });
    });
  }
  vends.set(reference, txn);
  ledger.record('vend', reference, `${amount}.00`, 'NGN');
  return ok(txn, pending ? 'Vend pending' : 'Vend successful');
}

/** The vend's meta, as the spec's sample shows it. */
function vendMeta(lookup: Lookup, amount: number, token: string, batch: string, now: string): Record<string, unknown> {
  const vat = (amount * VAT_RATE) / (100 + VAT_RATE);
  const units = (amount - vat) / TARIFF_RATE;
  return {
    kct: null,
    vat: vat.toFixed(2),
    token,
    address: lookup.meter.address,
    balance: null,
    penalty: '0.00',
    provider: lookup.provider,
    vat_rate: VAT_RATE,
    hp_profit: '0.00',
    reference: lookup.reference,
    account_no: lookup.meterNo,
    meter_cost: '0.00',
    meter_type: lookup.meter.meter_type,
    amount_paid: `${amount}.00`,
    tariff_rate: TARIFF_RATE,
    total_units: units.toFixed(2),
    account_name: lookup.meter.customer_name,
    cost_of_unit: TARIFF_RATE.toFixed(2),
    fixed_charge: '0.00',
    meter_number: lookup.meterNo,
    tariff_class: 'R2',
    provider_meta: {
      code: lookup.provider,
      name: PROVIDER_NAMES[lookup.provider],
      type: 'electricity',
      logo_url: null,
      total_rate_cap: null,
      hb_income_percent: null,
      total_rate_percent: null,
      third_party_rate_cap: null,
      third_party_rate_percent: null,
    },
    current_charge: '0.00',
    receipt_number: `RCPT${randomDigits(10)}`,
    loss_of_revenue: '0.00',
    installation_fee: '0.00',
    outstanding_debt: lookup.meter.outstanding_debt,
    reconnection_fee: '0.00',
    transaction_date: now,
    hp_wallet_batch_id: batch,
    meter_service_charge: '0.00',
    administrative_charge: '0.00',
  };
}

/** One vend by reference (H4), or the vends between two days, newest first. */
function vendTransactions({ vends }: VendingState, { query }: RequestContext): Reply {
  const reference = query.get('reference');
  if (reference) {
    const txn = vends.get(reference);
    return txn ? ok(txn) : fail(404, 'Transaction not found');
  }
  const rows = [...vends.values()].filter((t) => inDays(String(t.createdAt), query)).reverse();
  return ok(page(rows, query, 20));
}

export function registerVending(router: Router, deps: { clock: SandboxClock; ledger: Ledger }): void {
  const state: VendingState = { ...deps, lookups: new Map(), vends: new Map() };
  addRoutes(router, 'vending', state, [
    ['GET', '/vending/utilities/electricity/service-providers', {}, serviceProviders],
    ['POST', '/vending/utilities/electricity/lookup', LOOKUP_METER_FIELDS, lookupMeter],
    ['POST', '/vending/utilities/electricity', VEND_FIELDS, vend],
    ['GET', '/vending/transactions', VEND_TRANSACTIONS_FIELDS, vendTransactions],
  ]);
}
