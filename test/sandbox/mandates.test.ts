// D. Direct-debit mandates over plain HTTP: create, OTP session on the clock, approve, debit,
// duplicates, cancel report, listing with filters and cursors, resend, reject.
import { MANDATE_OTP, MANDATE_SESSION_MS } from '../../src/sandbox';
import { mandateBody, useSandbox, uid, type Json } from './helpers';

const env = useSandbox();

const create = async (over: Record<string, unknown> = {}) => {
  const r = await env.api.post('/transaction/mandate/create', mandateBody(over));
  expect(r.status).toBe(200);
  return r.body!.data as Json;
};
const approve = async (over: Record<string, unknown> = {}) => {
  const m = await create(over);
  expect(
    (
      await env.api.post('/transaction/mandate/validate-otp', {
        session_token: m.session_token,
        otp: Number(MANDATE_OTP),
      })
    ).status,
  ).toBe(200);
  return m;
};
const debit = (mandate_id: string, amount: number, transaction_reference = uid('D-')) =>
  env.api.post('/transaction/mandate/debit', {
    amount,
    mandate_id,
    transaction_reference,
    narration: 'Nov',
    pass_charge: false,
    customer_email: 'x@example.com',
  });
const get = async (mandateId: string) =>
  ((await env.api.get(`/transaction/mandate/get-mandates?mandate_id=${mandateId}`)).body!.data.records as Json[])[0];

describe("the sandbox's direct-debit mandates (D1-D4)", () => {
  it('creates an initiated mandate with a session (D1); the OTP approves it (D2)', async () => {
    const m = await create();
    expect(m).toMatchObject({
      status: 'initiated',
      approved: false,
      is_approved: false,
      ready_to_debit: false,
      next_action: 'send_otp',
      session_token: expect.any(String),
      mandate_id: expect.stringMatching(/^MD\d{10}$/),
      mandate_type: 'emandate',
      debit_type: 'variable',
      amount: 1_000_000,
      balance: 1_000_000,
      total_debited: 0,
      account_number: '0123456789',
      account_name: 'Ada Obi',
      bank: '058',
      bankName: 'Sandbox Partner Bank',
      customer_name: 'Ada Obi',
      message: expect.any(String),
      date: expect.any(String),
    });
    expect(m.reference).toBe(m.merchant_reference);
    const ok = await env.api.post('/transaction/mandate/validate-otp', {
      session_token: m.session_token,
      otp: MANDATE_OTP,
    });
    expect(ok.body!.data).toEqual({
      mandate_id: m.mandate_id,
      mandate_reference_number: expect.stringMatching(/^MRN\d{12}$/),
      status: 'approved',
      ready_to_debit: true,
    });
    expect(await get(m.mandate_id as string)).toMatchObject({
      status: 'approved',
      approved: true,
      is_approved: true,
      ready_to_debit: true,
      mandate_authorization_date: expect.any(String),
    });
    // The session is used up.
    expect(
      await env.api.post('/transaction/mandate/validate-otp', { session_token: m.session_token, otp: MANDATE_OTP }),
    ).toMatchObject({ status: 424, body: { message: 'Invalid or expired session.' } });
  });

  it('validation: required fields, FIXED settings, one live mandate per customer email, unique reference (D1)', async () => {
    expect((await env.api.post('/transaction/mandate/create', mandateBody({ amount: undefined }))).body!.message).toBe(
      'amount is required',
    );
    expect(
      (await env.api.post('/transaction/mandate/create', mandateBody({ account_number: '123' }))).body!.message,
    ).toBe('account_number must be 10 digits');
    expect(
      (
        await env.api.post(
          '/transaction/mandate/create',
          mandateBody({
            customerInformation: {
              identity: { type: 'bvn', number: '1' },
              firstName: 'A',
              lastName: 'B',
              address: 'x',
              phone: '1',
            },
          }),
        )
      ).status,
    ).toBe(400);
    expect(
      (await env.api.post('/transaction/mandate/create', mandateBody({ debit_type: 'FIXED' }))).body!.message,
    ).toBe('fixedMandateSettings is required');
    const fixed = await create({
      debit_type: 'FIXED',
      fixedMandateSettings: {
        frequency: 'MONTHLY',
        interval: 1,
        initial_debit_amount: 100_000,
        initial_debit_date: '2026-12-01',
      },
    });
    expect(fixed).toMatchObject({ debit_type: 'fixed', frequency: 'MONTHLY', initial_debit_amount: 100_000 });
    const email = `${uid('dup')}@example.com`;
    const first = await create({ customer_email: email });
    expect(
      await env.api.post('/transaction/mandate/create', mandateBody({ customer_email: email.toUpperCase() })),
    ).toMatchObject({ status: 400, body: { message: 'Customer already exists with the same email address.' } });
    await env.api.post('/transaction/mandate/cancel', { mandateIds: [first.mandate_id] });
    expect((await env.api.post('/transaction/mandate/create', mandateBody({ customer_email: email }))).status).toBe(
      200,
    ); // the old one is cancelled
    const ref = uid('R-');
    await create({ transaction_reference: ref });
    expect(
      (await env.api.post('/transaction/mandate/create', mandateBody({ transaction_reference: ref }))).body!.message,
    ).toBe('Duplicate transaction reference');
  });

  it('the OTP session expires after 10 minutes (424); a resend (D6) opens a new window; wrong OTPs', async () => {
    const m = await create();
    expect(
      await env.api.post('/transaction/mandate/validate-otp', { session_token: m.session_token, otp: '000000' }),
    ).toMatchObject({ status: 400, body: { message: 'Invalid OTP' } });
    await env.api.admin.advance(MANDATE_SESSION_MS + 1000);
    expect(
      await env.api.post('/transaction/mandate/validate-otp', { session_token: m.session_token, otp: MANDATE_OTP }),
    ).toMatchObject({ status: 424, body: { status: 424, message: 'Invalid or expired session.' } });
    expect(await env.api.post('/transaction/mandate/resend-otp', { session_token: m.session_token })).toMatchObject({
      status: 200,
      body: { data: {} },
    });
    // Three wrong OTPs end the session; a resend gives three more tries.
    for (let i = 0; i < 3; i++)
      expect(
        (await env.api.post('/transaction/mandate/validate-otp', { session_token: m.session_token, otp: '000000' }))
          .status,
      ).toBe(400);
    expect(
      (await env.api.post('/transaction/mandate/validate-otp', { session_token: m.session_token, otp: MANDATE_OTP }))
        .status,
    ).toBe(424);
    await env.api.post('/transaction/mandate/resend-otp', { session_token: m.session_token });
    expect(
      (await env.api.post('/transaction/mandate/validate-otp', { session_token: m.session_token, otp: MANDATE_OTP }))
        .body!.data.status,
    ).toBe('approved');
    expect((await env.api.post('/transaction/mandate/resend-otp', { session_token: m.session_token })).status).toBe(
      424,
    ); // approved: no session to resend
    expect(
      (await env.api.post('/transaction/mandate/validate-otp', { session_token: 'nope', otp: MANDATE_OTP })).status,
    ).toBe(424);
  });

  it('debits within the balance (aamount), refuses below N200, above the balance, duplicates, and before approval (D3)', async () => {
    const pending = await create();
    expect(await debit(pending.mandate_id as string, 50_000)).toMatchObject({
      status: 400,
      body: { message: 'Mandate is not ready for debit' },
    });
    const m = await approve();
    const id = m.mandate_id as string;
    const ref = uid('debit-');
    const r = await debit(id, 250_000, ref);
    expect(r.body!.data).toEqual({
      status: 'success',
      aamount: 250_000,
      mandate_id: id,
      transaction_reference: ref,
      date: expect.any(String),
      account: {
        bank_code: '058',
        account_name: 'Ada Obi',
        account_number: '0123456789',
        bank_name: 'Sandbox Partner Bank',
      },
    });
    expect(await debit(id, 250_000, ref)).toMatchObject({
      status: 400,
      body: { message: 'Duplicate transaction reference' },
    });
    expect(await debit(id, 19_999)).toMatchObject({
      status: 400,
      body: { message: 'Minimum amount for direct debit is N200.' },
    });
    expect(await debit(id, 750_001)).toMatchObject({
      status: 400,
      body: { message: 'Mandate balance is lesser than debit amount' },
    });
    expect((await debit(id, 750_000)).status).toBe(200);
    expect(await get(id)).toMatchObject({ balance: 0, total_debited: 1_000_000 });
    expect(env.sb.ledger({ reference: ref })).toEqual([
      expect.objectContaining({ kind: 'mandate_debit', amount: 250_000 }),
    ]);
    expect((await debit('MD0000000000', 50_000)).status).toBe(404);
  });

  it('cancels, always 200, reporting already-cancelled and unknown ids; a cancelled mandate cannot be debited (D4)', async () => {
    const a = await approve();
    const b = await create();
    const r = await env.api.post('/transaction/mandate/cancel', { mandateIds: [a.mandate_id, b.mandate_id] });
    expect(r).toMatchObject({
      status: 200,
      body: { data: { canceledMandates: [a.mandate_id, b.mandate_id], failedMandates: [] } },
    });
    const again = await env.api.post('/transaction/mandate/cancel', { mandateIds: [a.mandate_id, 'MD404'] });
    expect(again.body!.data).toEqual({
      canceledMandates: [],
      failedMandates: [
        { mandateId: a.mandate_id, failureReason: 'Mandate already cancelled' },
        { mandateId: 'MD404', failureReason: 'Mandate not found' },
      ],
    });
    expect((await debit(a.mandate_id as string, 50_000)).body!.message).toBe('Mandate is not ready for debit');
    expect(await get(a.mandate_id as string)).toMatchObject({ status: 'cancelled', ready_to_debit: false });
  });

  it('filters and pages with cursors; an unknown merchant_ref is HTTP 404 with body status 400 (D5)', async () => {
    const name = uid('Zed');
    const made: Json[] = [];
    for (let i = 0; i < 5; i++)
      made.push(
        await create({
          customerInformation: {
            identity: { type: 'bvn', number: '22212345678' },
            firstName: name,
            lastName: 'Pager',
            address: '1 Way',
            phone: '08012345678',
          },
        }),
      );
    const q = (extra: string) =>
      env.api.get(`/transaction/mandate/get-mandates?customer_name=${encodeURIComponent(`${name} Pager`)}&${extra}`);
    const p1 = (await q('page_size=2')).body!.data as Json;
    expect(p1).toMatchObject({ page_size: 2, has_more: true, prev_cursor: null, next_cursor: expect.any(String) });
    expect(p1.records.map((r: Json) => r.mandate_id)).toEqual([made[0].mandate_id, made[1].mandate_id]);
    const p2 = (await q(`page_size=2&cursor=${p1.next_cursor}`)).body!.data as Json;
    const p3 = (await q(`page_size=2&cursor=${p2.next_cursor}`)).body!.data as Json;
    expect(p3).toMatchObject({ has_more: false, next_cursor: null, prev_cursor: expect.any(String) });
    expect([...p1.records, ...p2.records, ...p3.records].map((r: Json) => r.mandate_id)).toEqual(
      made.map((m) => m.mandate_id),
    );
    expect(
      (
        await q(
          'status=initiated&is_approved=false&debit_type=VARIABLE&mandate_type=emandate&account_number=0123456789&amount=1000000',
        )
      ).body!.data.records as Json[],
    ).toHaveLength(5);
    expect((await q('status=approved')).body!.data.records as Json[]).toHaveLength(0);
    const byRef = await env.api.get(`/transaction/mandate/get-mandates?merchant_ref=${made[2].reference}`);
    expect(byRef.body!.data.records).toEqual([expect.objectContaining({ mandate_id: made[2].mandate_id })]);
    const missing = await env.api.get('/transaction/mandate/get-mandates?merchant_ref=no-such-ref');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      status: 400,
      success: false,
      message: 'No mandate found for reference no-such-ref',
      data: null,
    });
    expect((await env.api.get('/transaction/mandate/get-mandates?start_date=22-11-2026')).status).toBe(400);
  });

  it("the account holder can reject a pending mandate (admin): status 'rejected'", async () => {
    const m = await create();
    expect((await env.api.admin.post(`/mandates/${m.mandate_id}/reject`)).body!.data).toEqual({
      mandate_id: m.mandate_id,
      status: 'rejected',
    });
    expect(await get(m.mandate_id as string)).toMatchObject({ status: 'rejected', ready_to_debit: false });
    expect(
      (await env.api.post('/transaction/mandate/validate-otp', { session_token: m.session_token, otp: MANDATE_OTP }))
        .status,
    ).toBe(424);
  });
});
