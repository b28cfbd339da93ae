// A. Hosted checkout (A1, the modal page and its channels by JSON and by HTML forms, A2), tokens
// (A3-A5) and transaction queries (A6, verify), over plain HTTP.
import { SANDBOX_OTP, SANDBOX_PIN, TEST_CARDS, CHECKOUT_LIFETIME_MS, chargeFor } from '../../src/sandbox';
import { useSandbox, Receiver, uid, type Json } from './helpers';

const receiver = new Receiver();
const env = useSandbox({}, receiver);

const initiate = (ref: string, extra: Record<string, unknown> = {}) =>
  env.api.post('/transaction/initiate', {
    amount: '250000',
    email: 'ada@example.com',
    currency: 'NGN',
    initiate_type: 'inline',
    transaction_ref: ref,
    callback_url: 'https://merchant.example/done',
    ...extra,
  });
const verify = async (ref: string) =>
  (await env.api.get(`/transaction/verify/${ref}`)).body?.data?.transaction_status as string;
const pub = (path: string, body: unknown = {}, form = false) => env.api.call('POST', path, body, { key: null, form });
const cardFields = (number: string) => ({ number, cvv: '123', expiry_month: '12', expiry_year: '29' });

describe('initiate (A1)', () => {
  it("returns the spec's data shape with a checkout_url on the sandbox", async () => {
    const ref = uid('co-');
    const r = await initiate(ref, { customer_name: 'Ada Obi', metadata: { order: 'A-1' } });
    expect(r).toMatchObject({ status: 200, body: { status: 200, success: true } });
    expect(r.body!.data).toEqual({
      auth_url: null,
      access_token: null,
      merchant_info: {
        merchant_response: null,
        merchant_name: 'Sandbox Merchant',
        merchant_logo: null,
        merchant_id: 'SBXMERCHANT',
      },
      currency: 'NGN',
      recurring: { frequency: null, duration: null, plan_code: null, customer_name: 'Ada Obi', type: 0 },
      is_recurring: false,
      plan_code: null,
      callback_url: 'https://merchant.example/done',
      transaction_ref: ref,
      transaction_memo: null,
      transaction_amount: 250_000,
      authorized_channels: ['card', 'bank', 'ussd', 'transfer'],
      checkout_url: `${env.sb.url}/checkout/${ref}`,
    });
    expect(await verify(ref)).toBe('Pending');
  });

  it('400s name the field ({success:false, message, data:null}); duplicates and bad values are refused', async () => {
    const res = await env.api.post('/transaction/initiate', {
      amount: '100',
      currency: 'NGN',
      initiate_type: 'inline',
    });
    expect(res).toMatchObject({ status: 400 });
    expect(res.body).toEqual({ success: false, message: 'email is required', data: null });
    expect(
      (
        await env.api.post('/transaction/initiate', {
          amount: '100',
          email: '',
          currency: 'NGN',
          initiate_type: 'inline',
        })
      ).body!.message,
    ).toBe('email is not allowed to be empty');
    expect((await initiate(uid('x-'), { currency: 'EUR' })).body!.message).toBe('currency must be NGN or USD');
    expect((await initiate(uid('x-'), { initiate_type: 'redirect' })).body!.message).toBe(
      'initiate_type must be inline',
    );
    expect((await initiate(uid('x-'), { payment_channels: ['card', 'cash'] })).status).toBe(400);
    expect((await initiate(uid('x-'), { amount: '0' })).status).toBe(400);
    const ref = uid('dup-');
    await initiate(ref);
    expect((await initiate(ref)).body).toEqual({
      success: false,
      message: 'Duplicate transaction reference',
      data: null,
    });
    expect(
      (
        await env.api.post('/transaction/initiate', {
          amount: 100,
          email: 'a@b.co',
          currency: 'NGN',
          initiate_type: 'inline',
        })
      ).body!.data.transaction_ref,
    ).toMatch(/^SBX/);
  });
});

describe('the modal (checkout_url)', () => {
  it('is an HTML page offering only the authorized channels', async () => {
    const ref = uid('pg-');
    await initiate(ref, { payment_channels: ['card', 'transfer'] });
    const page = await fetch(`${env.sb.url}/checkout/${ref}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('data-channel="card"');
    expect(html).toContain('data-channel="transfer"');
    expect(html).not.toContain('data-channel="bank"');
    expect(html).toContain('NGN 2,500.00');
    expect(html).toContain(`action="/checkout/${ref}/card"`);
    expect((await pub(`/checkout/${ref}/bank`, { account_or_phoneno: '0123456789' })).status).toBe(400); // not authorized
  });

  it('card by JSON: PIN then OTP; a recurring checkout yields a token in the payment webhook', async () => {
    const ref = uid('cj-');
    await initiate(ref, { is_recurring: true, metadata: { order: 'A-2' } });
    expect((await pub(`/checkout/${ref}/card`, cardFields(TEST_CARDS.pinThenOtp))).body!.data).toMatchObject({
      transaction_ref: ref,
      transaction_status: 'ValidatePin',
    });
    expect((await pub(`/checkout/${ref}/authorize`, { pin: '9999' })).body!.message).toBe('Invalid PIN');
    expect((await pub(`/checkout/${ref}/authorize`, { pin: SANDBOX_PIN })).body!.data.transaction_status).toBe(
      'ValidateOTP',
    );
    expect((await pub(`/checkout/${ref}/authorize`, { otp: SANDBOX_OTP })).body!.data.transaction_status).toBe(
      'Success',
    );
    expect(await verify(ref)).toBe('Success');
    expect(env.sb.ledger({ reference: ref })).toEqual([expect.objectContaining({ kind: 'checkout', amount: 250_000 })]);
    const [hook] = await receiver.waitFor(ref);
    expect(hook.json.Body).toMatchObject({
      is_recurring: true,
      meta: { order: 'A-2' },
      transaction_type: 'Card',
      payment_information: { token_id: expect.stringMatching(/^AUTH_\d{12}$/) },
    });
    expect((await pub(`/checkout/${ref}/card`, cardFields(TEST_CARDS.otpOnly))).body!.message).toBe(
      'Checkout is Success',
    );
  });

  it('card by HTML forms: PIN page, OTP page, then a redirect to callback_url?reference=', async () => {
    const ref = uid('cf-');
    await initiate(ref);
    const pinPage = await pub(`/checkout/${ref}/card`, cardFields(TEST_CARDS.pinThenOtp), true);
    expect(pinPage.status).toBe(200);
    expect(pinPage.headers.get('content-type')).toContain('text/html');
    expect(pinPage.text).toContain('name="pin"');
    expect(pinPage.text).not.toContain(TEST_CARDS.pinThenOtp);
    const wrong = await pub(`/checkout/${ref}/authorize`, { pin: '0000' }, true);
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('Invalid PIN');
    const otpPage = await pub(`/checkout/${ref}/authorize`, { pin: SANDBOX_PIN }, true);
    expect(otpPage.text).toContain('name="otp"');
    const done = await pub(`/checkout/${ref}/authorize`, { otp: SANDBOX_OTP }, true);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`https://merchant.example/done?reference=${ref}`);
    await receiver.waitFor(ref);
    expect(await (await fetch(`${env.sb.url}/checkout/${ref}`)).text()).toContain('data-status="Success"');
  });

  it('card 3DS by form: redirected to the challenge page, completed there', async () => {
    const ref = uid('c3-');
    await initiate(ref);
    const toChallenge = await pub(`/checkout/${ref}/card`, cardFields(TEST_CARDS.threeDs), true);
    expect(toChallenge.status).toBe(303);
    expect(toChallenge.headers.get('location')).toBe(`/3ds/${ref}`);
    const done = await pub(`/3ds/${ref}/complete`, {}, true);
    expect(done.headers.get('location')).toBe(`https://merchant.example/done?reference=${ref}`);
    expect(await verify(ref)).toBe('Success');
  });

  it('a declined card or three wrong OTPs leave the checkout open for another attempt', async () => {
    const ref = uid('cd-');
    await initiate(ref);
    expect((await pub(`/checkout/${ref}/card`, cardFields(TEST_CARDS.declined))).body!.message).toBe('Card declined');
    expect(await verify(ref)).toBe('Pending');
    await pub(`/checkout/${ref}/card`, cardFields(TEST_CARDS.otpOnly));
    for (let i = 0; i < 3; i++) await pub(`/checkout/${ref}/authorize`, { otp: '000000' });
    expect(await verify(ref)).toBe('Pending');
    expect((await pub(`/checkout/${ref}/authorize`, { otp: SANDBOX_OTP })).body!.message).toBe(
      'No card payment in progress',
    );
    await pub(`/checkout/${ref}/card`, cardFields(TEST_CARDS.otpOnly));
    expect((await pub(`/checkout/${ref}/authorize`, { otp: SANDBOX_OTP })).status).toBe(200);
  });

  it('bank channel: the auth_model, then the code (in one call or two)', async () => {
    const one = uid('cb-');
    await initiate(one);
    expect(
      (await pub(`/checkout/${one}/bank`, { account_or_phoneno: '0123456789', otp_token: '000000' })).body!.message,
    ).toBe('Invalid OTP or token');
    expect(
      (await pub(`/checkout/${one}/bank`, { account_or_phoneno: '0123456789', otp_token: SANDBOX_OTP })).body!.data,
    ).toMatchObject({ transaction_status: 'Success', auth_model: 'ValidateOTP' });
    expect((await receiver.waitFor(one))[0].json.Body.transaction_type).toBe('Bank');
    const two = uid('cb-');
    await initiate(two);
    expect((await pub(`/checkout/${two}/bank`, { account_or_phoneno: '1234567890' })).body!.data).toMatchObject({
      transaction_status: 'Pending',
      auth_model: 'ValidateTOKEN',
    });
    expect(
      (await pub(`/checkout/${two}/bank/validate`, { otp_token: SANDBOX_OTP })).body!.data.transaction_status,
    ).toBe('Success');
    expect(env.sb.ledger({ reference: two })).toEqual([expect.objectContaining({ kind: 'checkout' })]);
  });

  it('USSD channel: a code valid until the checkout expires, paid by the payer (admin dial)', async () => {
    const ref = uid('cu-');
    await initiate(ref);
    const code = (await pub(`/checkout/${ref}/ussd`, { bank_code: '044' })).body!.data as Json;
    expect(code.ussd_reference).toMatch(/^\*044\*000\*\d{6}#$/);
    expect(await env.api.admin.post(`/ussd/${ref}/pay`)).toMatchObject({ status: 200 });
    expect(await verify(ref)).toBe('Success');
    expect((await receiver.waitFor(ref))[0].json.Body.transaction_type).toBe('Ussd');
  });

  it('transfer channel: a dynamic account paid by a simulated transfer (A2, dva: true); a wrong amount or a paid checkout is refused', async () => {
    const ref = uid('ct-');
    await initiate(ref, { pass_charge: true });
    const account = (await pub(`/checkout/${ref}/transfer`)).body!.data as {
      virtual_account_number: string;
      amount: number;
    };
    expect(account.virtual_account_number).toMatch(/^99\d{8}$/);
    expect(account.amount).toBe(250_000 + chargeFor(250_000));
    expect((await pub(`/checkout/${ref}/transfer`)).body!.data.virtual_account_number).toBe(
      account.virtual_account_number,
    ); // stable
    const transferForm = await pub(`/checkout/${ref}/transfer`, {}, true);
    expect(transferForm.text).toContain(account.virtual_account_number);
    const simulate = (body: Record<string, unknown>) =>
      env.api.post('/virtual-account/simulate/payment', { dva: true, ...body });
    expect((await simulate({ virtual_account_number: account.virtual_account_number })).body!.message).toBe(
      'amount is required',
    );
    expect((await simulate({ virtual_account_number: account.virtual_account_number, amount: 1 })).status).toBe(400);
    expect((await simulate({ virtual_account_number: '9900000000', amount: 1 })).body!.message).toBe(
      'Virtual account not found',
    );
    expect(
      await simulate({ virtual_account_number: Number(account.virtual_account_number), amount: account.amount }),
    ).toMatchObject({ status: 200, body: { success: true, data: 'Payment successful' } });
    expect(await verify(ref)).toBe('Success');
    expect((await receiver.waitFor(ref))[0].json.Body).toMatchObject({
      transaction_type: 'Transfer',
      amount: account.amount,
      merchant_amount: 250_000,
      payment_information: { payment_type: 'transfer' },
    });
    expect(
      (await simulate({ virtual_account_number: account.virtual_account_number, amount: account.amount })).body!
        .message,
    ).toBe('Checkout is Success');
    expect(env.sb.ledger({ reference: ref })).toHaveLength(1);
  });

  it('an unpaid checkout is Abandoned after 30 minutes on the sandbox clock; its channels close', async () => {
    const ref = uid('ca-');
    await initiate(ref);
    await env.api.admin.advance(CHECKOUT_LIFETIME_MS + 1000);
    expect(await verify(ref)).toBe('Abandoned');
    expect((await pub(`/checkout/${ref}/card`, cardFields(TEST_CARDS.otpOnly))).body!.message).toBe(
      'Checkout is Abandoned',
    );
    expect(await (await fetch(`${env.sb.url}/checkout/${ref}`)).text()).toContain('data-status="Abandoned"');
  });
});

describe('tokens (A4/A5)', () => {
  async function tokenise(): Promise<string> {
    const ref = uid('tk-');
    await initiate(ref, { is_recurring: true });
    await pub(`/checkout/${ref}/card`, cardFields(TEST_CARDS.otpOnly));
    await pub(`/checkout/${ref}/authorize`, { otp: SANDBOX_OTP });
    return (await receiver.waitFor(ref))[0].json.Body.payment_information.token_id as string;
  }
  const charge = (body: Record<string, unknown>) => env.api.post('/transaction/charge_card', body);

  it('charges the token (result, ledger, the payment webhook with the token); a repeated reference charges once (A4)', async () => {
    const token = await tokenise();
    const ref = uid('cy-');
    const r = await charge({ amount: 150_000, token_id: token, transaction_ref: ref });
    expect(r.body!.data).toMatchObject({
      transaction_amount: 150_000,
      transaction_ref: ref,
      transaction_status: 'Success',
      transaction_type: 'Card',
      transaction_currency_id: 'NGN',
      email: 'ada@example.com',
    });
    expect(await charge({ amount: 150_000, token_id: token, transaction_ref: ref })).toMatchObject({
      status: 400,
      body: { message: 'Duplicate transaction reference' },
    });
    expect(env.sb.ledger({ reference: ref })).toEqual([
      expect.objectContaining({ kind: 'token_charge', amount: 150_000 }),
    ]);
    const hooks = await receiver.waitFor(ref);
    expect(hooks).toHaveLength(1);
    expect(hooks[0].json.Body).toMatchObject({
      is_recurring: true,
      payment_information: { token_id: token, payment_type: 'card' },
    });
    expect(await verify(ref)).toBe('Success');
  });

  it("the charge refuses 'amount cannot be < 0' (A4), an unknown token and missing fields", async () => {
    const token = await tokenise();
    expect(await charge({ amount: -1, token_id: token, transaction_ref: uid('n-') })).toMatchObject({
      status: 400,
      body: { message: 'amount cannot be < 0' },
    });
    expect((await charge({ amount: 100, token_id: 'AUTH_nope', transaction_ref: uid('n-') })).body!.message).toBe(
      'Invalid token_id',
    );
    expect((await charge({ token_id: token })).body!.message).toBe('amount is required');
  });

  it("cancels (A5; data.auth_code lists what was cancelled); again → 400 'Recurring Payment was not cancelled'; charging it → 400", async () => {
    const token = await tokenise();
    const other = await tokenise();
    expect(
      await env.api.call('PATCH', '/transaction/cancel/recurring', { auth_code: [token, 'AUTH_unknown'] }),
    ).toMatchObject({ status: 200, body: { data: { auth_code: [token] } } });
    expect(await env.api.call('PATCH', '/transaction/cancel/recurring', { auth_code: [token] })).toMatchObject({
      status: 400,
      body: { message: 'Recurring Payment was not cancelled' },
    });
    const ref = uid('cc-');
    expect((await charge({ amount: 100, token_id: token, transaction_ref: ref })).status).toBe(400);
    expect(env.sb.ledger({ reference: ref })).toHaveLength(0);
    expect(
      (await env.api.call('PATCH', '/transaction/cancel/recurring', { auth_code: other })).body!.data.auth_code,
    ).toEqual([other]);
  });
});

describe('query and verify (A6)', () => {
  const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

  it('needs both dates at most one month apart (400 Bad Request); finds records by reference with the spec fields', async () => {
    const ref = uid('q-');
    await initiate(ref, { metadata: { order: 'Q-1' } });
    const found = await env.api.get(
      `/transaction?currency=NGN&start_date=${day(-1)}&end_date=${day(1)}&page=1&perpage=10&reference=${ref}`,
    );
    expect(found.status).toBe(200);
    expect(found.body!.data).toHaveLength(1);
    const rec = found.body!.data[0] as Json;
    expect(rec).toMatchObject({
      transaction_amount: 250_000,
      transaction_ref: ref,
      email: 'ada@example.com',
      merchant_id: 'SBXMERCHANT',
      transaction_status: 'pending',
      transaction_currency_id: 'NGN',
      transaction_type: 'Card',
      is_suspicious: false,
      is_refund: false,
      id: expect.any(Number),
      transaction_charges: chargeFor(250_000),
      created_at: expect.any(String),
    });
    expect(JSON.parse(rec.meta_data as string)).toMatchObject({
      extra: { order: 'Q-1' },
      initiate_type: 'inline',
      callback_url: 'https://merchant.example/done',
    });
    expect(rec.meta.extra).toEqual([{ order: 'Q-1' }]);
    for (const q of [
      '',
      `start_date=${day(0)}`,
      `end_date=${day(0)}`,
      'start_date=2026-01-01&end_date=2026-02-02',
      'start_date=2026-02-01&end_date=2026-01-01',
      'start_date=nope&end_date=2026-01-02',
    ]) {
      expect(await env.api.get(`/transaction?${q}`)).toMatchObject({ status: 400, body: { message: 'Bad Request' } });
    }
    expect((await env.api.get('/transaction?start_date=2026-01-31&end_date=2026-02-28')).status).toBe(200);
  });

  it('pages with page/perpage, newest first', async () => {
    const refs = [uid('p1-'), uid('p2-'), uid('p3-')];
    for (const r of refs) await initiate(r, { currency: 'USD' });
    const q = (p: number) =>
      env.api.get(`/transaction?currency=USD&start_date=${day(-1)}&end_date=${day(1)}&perpage=2&page=${p}`);
    const first = (await q(1)).body!.data as Json[];
    const second = (await q(2)).body!.data as Json[];
    expect(first.map((r) => r.transaction_ref)).toEqual([refs[2], refs[1]]);
    expect(second.map((r) => r.transaction_ref)).toEqual([refs[0]]);
  });
});
