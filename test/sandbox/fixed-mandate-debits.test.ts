// The sandbox debits an approved FIXED mandate on its own, on each scheduled date of its clock, as
// the service does: the mandate's total_debited (D5) and balance move, verify knows each debit, the ledger has one
// mandate_debit per date, and no requested debit is involved. One debit per (mandate, date) however the clock is
// moved; a short balance refuses the date as a requested debit would; a cancelled mandate is not debited.
import { MANDATE_OTP } from '../../src/sandbox';
import { mandateBody, useSandbox, type Json } from './helpers';

const env = useSandbox();
const DAY = 24 * 3600 * 1000;

/** The sandbox's current time (its clock moves across this file's tests). */
const sandboxNow = async () => Date.parse((await env.api.admin.get('/clock')).body!.data.now as string);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const midnight = (ms: number) => Math.floor(ms / DAY) * DAY;

/** A daily FIXED mandate (WEEKLY, 7 a week) of `amount`, 100 000 kobo a date from `first`, approved with the OTP. */
async function approvedFixed(first: number, last: number, amount: number): Promise<Json> {
  const r = await env.api.post(
    '/transaction/mandate/create',
    mandateBody({
      debit_type: 'FIXED',
      amount,
      description: 'Daily plan',
      start_date: dayOf(first - DAY),
      end_date: dayOf(last),
      fixedMandateSettings: {
        frequency: 'WEEKLY',
        interval: 7,
        initial_debit_amount: 100_000,
        initial_debit_date: dayOf(first),
      },
    }),
  );

  expect(r.status).toBe(200);
  const m = r.body!.data as Json;
  const approved = await env.api.post('/transaction/mandate/validate-otp', {
    session_token: m.session_token,
    otp: Number(MANDATE_OTP),
  });
  expect(approved.status).toBe(200);
  return m;
}

const record = async (id: string) =>
  ((await env.api.get(`/transaction/mandate/get-mandates?mandate_id=${id}`)).body!.data.records as Json[])[0];
const scheduled = async (id: string) =>
  (await env.api.admin.get(`/mandates/${id}/scheduled-debits`)).body!.data as Json[];
const ledgerOf = async (id: string) =>
  ((await env.api.admin.get('/ledger?kind=mandate_debit')).body!.data as Json[]).filter((e) =>
    String(e.reference).startsWith(`${id}-F`),
  );
/** Moves the sandbox clock to `at` (sandbox time). */
const moveTo = async (at: number) => env.api.admin.advance(Math.max(at - (await sandboxNow()), 0));

describe('the sandbox debits FIXED mandates on its own schedule', () => {
  it('one debit per date as the clock passes it (moving past a date twice debits it once); a date the balance cannot cover is refused; none after end_date', async () => {
    const tomorrow = midnight(await sandboxNow()) + DAY;
    const m = await approvedFixed(tomorrow, tomorrow + 2 * DAY, 250_000);
    const id = String(m.mandate_id);
    expect(await scheduled(id)).toEqual([]); // tomorrow's date is not reached yet

    await moveTo(tomorrow + 3600_000);
    await env.api.admin.advance(60_000); // past the same date again
    expect(await record(id)).toMatchObject({ total_debited: 100_000, balance: 150_000, status: 'approved' });
    expect(await ledgerOf(id)).toHaveLength(1);

    // The second and third dates in one move, and on past end_date.
    await moveTo(tomorrow + 5 * DAY);
    const debits = await scheduled(id);
    expect(debits.map((d) => [d.date, d.reference, d.amount, d.status, d.failureReason])).toEqual([
      [dayOf(tomorrow), `${id}-F${dayOf(tomorrow)}`, 100_000, 'success', undefined],
      [dayOf(tomorrow + DAY), `${id}-F${dayOf(tomorrow + DAY)}`, 100_000, 'success', undefined],
      [
        dayOf(tomorrow + 2 * DAY),
        `${id}-F${dayOf(tomorrow + 2 * DAY)}`,
        100_000,
        'failed',
        'Mandate balance is lesser than debit amount',
      ],
    ]);
    expect(await record(id)).toMatchObject({ total_debited: 200_000, balance: 50_000 });
    expect((await ledgerOf(id)).map((e) => [e.reference, e.amount])).toEqual([
      [debits[0].reference, 100_000],
      [debits[1].reference, 100_000],
    ]);
    // Verify knows each of the service's debits; the debit call (D3) was never made.
    const verify = async (ref: string) =>
      (await env.api.get(`/transaction/verify/${encodeURIComponent(ref)}`)).body!.data as Json;
    expect(await verify(debits[1].reference)).toMatchObject({
      transaction_status: 'Success',
      transaction_amount: 100_000,
    });
    expect(await verify(debits[2].reference)).toMatchObject({ transaction_status: 'Failed' });
    const log = (await env.api.admin.get('/requests')).body!.data as Json[];
    expect(log.filter((e) => e.path === '/transaction/mandate/debit')).toEqual([]);
    // A requested debit (D3) naming a date's reference is a duplicate: the date cannot be taken twice that way either.
    const debit = await env.api.post('/transaction/mandate/debit', {
      amount: 20_000,
      mandate_id: id,
      transaction_reference: debits[0].reference,
    });
    expect(debit.body!.message).toBe('Duplicate transaction reference');
  });

  it("a date already reached at approval (today's) is debited before the OTP validation answers; earlier dates are not", async () => {
    const today = midnight(await sandboxNow());
    const m = await approvedFixed(today - DAY, today + DAY, 1_000_000);
    const id = String(m.mandate_id);
    expect((await scheduled(id)).map((d) => [d.date, d.status])).toEqual([[dayOf(today), 'success']]);
    expect(await record(id)).toMatchObject({ total_debited: 100_000, balance: 900_000 });
  });

  it('a cancelled mandate is not debited on its later dates', async () => {
    const tomorrow = midnight(await sandboxNow()) + DAY;
    const m = await approvedFixed(tomorrow, tomorrow + 3 * DAY, 1_000_000);
    const id = String(m.mandate_id);
    await moveTo(tomorrow + 3600_000);
    expect(await scheduled(id)).toHaveLength(1);
    await env.api.post('/transaction/mandate/cancel', { mandateIds: [id] });
    await moveTo(tomorrow + 4 * DAY);
    expect(await scheduled(id)).toHaveLength(1);
    expect(await record(id)).toMatchObject({ status: 'cancelled', total_debited: 100_000, balance: 900_000 });
  });

  it('a VARIABLE mandate is never debited on its own', async () => {
    const tomorrow = midnight(await sandboxNow()) + DAY;
    const r = await env.api.post(
      '/transaction/mandate/create',
      mandateBody({
        description: 'At will',
        start_date: dayOf(tomorrow - DAY),
        end_date: dayOf(tomorrow + 30 * DAY),
      }),
    );

    const m = r.body!.data as Json;
    await env.api.post('/transaction/mandate/validate-otp', { session_token: m.session_token, otp: 123456 });
    await moveTo(tomorrow + 2 * DAY);
    expect(await record(String(m.mandate_id))).toMatchObject({ status: 'approved', total_debited: 0 });
  });
});
