// B. Direct API over plain HTTP: card (PIN/OTP/3DS, declines, wrong codes, expiry), bank debit
// (ValidateTOKEN/ValidateOTP), USSD; verify; the payment webhook each success sends.
import {
  SANDBOX_OTP,
  SANDBOX_PIN,
  TEST_CARDS,
  BANK_INSUFFICIENT_FUNDS_ACCOUNT,
  STEP_LIFETIME_MS,
  chargeFor,
} from '../../src/sandbox';
import { useSandbox, Receiver, uid } from './helpers';

const receiver = new Receiver();
const env = useSandbox({}, receiver);

const customer = { name: 'Ada Obi', email: 'ada@example.com' };
const card = (number: string, over: Record<string, unknown> = {}) => ({
  number,
  cvv: '123',
  expiry_month: '12',
  expiry_year: '29',
  ...over,
});
const chargeCard = (ref: string, number: string, over: Record<string, unknown> = {}) =>
  env.api.post('/transaction/initiate/process-payment', {
    transaction_reference: ref,
    amount: 500_000,
    currency: 'NGN',
    payment_method: 'card',
    customer,
    card: card(number),
    redirect_url: 'https://merchant.example/return?x=1',
    ...over,
  });
const authorize = (ref: string, authorization: Record<string, string>) =>
  env.api.post('/transaction/payment/authorize', { transaction_reference: ref, authorization });
const verify = async (ref: string) =>
  (await env.api.get(`/transaction/verify/${ref}`)).body?.data?.transaction_status as string | undefined;

describe('card (B1/B2)', () => {
  it('PIN then OTP → Success: step results, one ledger entry, one payment webhook', async () => {
    const ref = uid('pin-');
    const first = await chargeCard(ref, TEST_CARDS.pinThenOtp);
    expect(first).toMatchObject({
      status: 200,
      body: {
        status: 200,
        success: true,
        data: {
          transaction_status: 'ValidatePin',
          transaction_ref: ref,
          amount: 500_000,
          currency: 'NGN',
          transaction_type: 'Card',
        },
      },
    });
    expect(first.body!.data).toMatchObject({
      gateway_ref: expect.any(String),
      merchant_amount: 500_000 - chargeFor(500_000),
      message: expect.any(String),
    });
    expect(await verify(ref)).toBe('Pending');
    expect((await authorize(ref, { otp: SANDBOX_OTP })).status).toBe(400); // OTP while the PIN is due
    expect((await authorize(ref, { pin: SANDBOX_PIN })).body!.data.transaction_status).toBe('ValidateOTP');
    const done = await authorize(ref, { otp: SANDBOX_OTP });
    expect(done).toMatchObject({
      status: 200,
      body: {
        message: 'Validate OTP Successful.',
        data: { transaction_status: 'Success', message: 'Validate OTP Successful.' },
      },
    });
    expect(await verify(ref)).toBe('Success');
    expect(env.sb.ledger({ reference: ref })).toEqual([
      expect.objectContaining({ kind: 'card_charge', amount: 500_000, currency: 'NGN' }),
    ]);
    const [hook] = await receiver.waitFor(ref);
    expect(hook.json).toMatchObject({
      Event: 'charge_successful',
      TransactionRef: ref,
      Body: {
        amount: 500_000,
        transaction_ref: ref,
        transaction_status: 'Success',
        email: 'ada@example.com',
        currency: 'NGN',
        transaction_type: 'Card',
        is_recurring: false,
        payment_information: { payment_type: 'card', pan: '555555******4444|12/29', card_type: 'mastercard' },
      },
    });
    // A second authorize after success is refused and charges nothing.
    expect(await authorize(ref, { otp: SANDBOX_OTP })).toMatchObject({
      status: 400,
      body: { message: 'Transaction has already been completed' },
    });
    expect(env.sb.ledger({ reference: ref })).toHaveLength(1);
  });

  it('the OTP-only card asks only for the OTP below 750000 kobo, and for the PIN first at or above', async () => {
    expect((await chargeCard(uid('o-'), TEST_CARDS.otpOnly, { amount: 749_999 })).body!.data.transaction_status).toBe(
      'ValidateOTP',
    );
    expect((await chargeCard(uid('o-'), TEST_CARDS.otpOnly, { amount: 750_000 })).body!.data.transaction_status).toBe(
      'ValidatePin',
    );
  });

  it('pass_charge: the payer pays amount + fee, the merchant gets the amount', async () => {
    const ref = uid('pc-');
    const r = await chargeCard(ref, TEST_CARDS.otpOnly, { amount: 100_000, pass_charge: true });
    expect(r.body!.data).toMatchObject({ amount: 100_000 + chargeFor(100_000), merchant_amount: 100_000 });
    await authorize(ref, { otp: SANDBOX_OTP });
    expect((await receiver.waitFor(ref))[0].json.Body).toMatchObject({
      amount: 100_000 + chargeFor(100_000),
      merchant_amount: 100_000,
    });
  });

  it('wrong PIN: 400 Invalid PIN with the state kept; the third wrong try fails the transaction', async () => {
    const ref = uid('wp-');
    await chargeCard(ref, TEST_CARDS.pinThenOtp);
    expect(await authorize(ref, { pin: '0000' })).toMatchObject({
      status: 400,
      body: { success: false, message: 'Invalid PIN' },
    });
    expect(await verify(ref)).toBe('Pending');
    expect((await authorize(ref, { pin: '1111' })).body!.message).toBe('Invalid PIN');
    expect((await authorize(ref, { pin: '2222' })).body!.message).toMatch(/^Invalid PIN: too many wrong attempts/);
    expect(await verify(ref)).toBe('Failed');
    expect(await authorize(ref, { pin: SANDBOX_PIN })).toMatchObject({
      status: 400,
      body: { message: 'Transaction has failed' },
    });
    expect(env.sb.ledger({ reference: ref })).toHaveLength(0);
  });

  it('wrong OTP twice then right: success', async () => {
    const ref = uid('wo-');
    await chargeCard(ref, TEST_CARDS.otpOnly, { amount: 10_000 });
    expect((await authorize(ref, { otp: '000000' })).body!.message).toBe('Invalid OTP');
    expect((await authorize(ref, { otp: '111111' })).body!.message).toBe('Invalid OTP');
    expect((await authorize(ref, { otp: SANDBOX_OTP })).status).toBe(200);
  });

  it('a step expires after 10 minutes on the sandbox clock: Failed, and the OTP is refused', async () => {
    const ref = uid('ex-');
    await chargeCard(ref, TEST_CARDS.otpOnly, { amount: 10_000 });
    await env.api.admin.advance(STEP_LIFETIME_MS + 1000);
    expect(await authorize(ref, { otp: SANDBOX_OTP })).toMatchObject({
      status: 400,
      body: { message: 'Transaction has expired' },
    });
    expect(await verify(ref)).toBe('Failed');
    expect(env.sb.ledger({ reference: ref })).toHaveLength(0);
  });

  it('declined card: 400 Card declined, the transaction is Failed; insufficient funds fails after the OTP', async () => {
    const ref = uid('dc-');
    expect(await chargeCard(ref, TEST_CARDS.declined)).toMatchObject({
      status: 400,
      body: { message: 'Card declined' },
    });
    expect(await verify(ref)).toBe('Failed');
    const nsf = uid('nsf-');
    expect((await chargeCard(nsf, TEST_CARDS.insufficientFunds)).body!.data.transaction_status).toBe('ValidateOTP');
    expect(await authorize(nsf, { otp: SANDBOX_OTP })).toMatchObject({
      status: 400,
      body: { message: 'Insufficient funds' },
    });
    expect(await verify(nsf)).toBe('Failed');
    expect(env.sb.ledger({ reference: nsf })).toHaveLength(0);
    expect(receiver.for(nsf)).toHaveLength(0);
  });

  it('validates: required fields, card fields, an unknown card, an expired card, a duplicate reference', async () => {
    const base = {
      transaction_reference: uid('v-'),
      amount: 1000,
      payment_method: 'card',
      customer,
      card: card(TEST_CARDS.otpOnly),
    };
    const msg = async (body: Record<string, unknown>) =>
      (await env.api.post('/transaction/initiate/process-payment', body)).body!.message as string;
    expect(await msg({ ...base, amount: undefined })).toBe('amount is required');
    expect(await msg({ ...base, customer: { name: 'A' } })).toBe('email is required');
    expect(await msg({ ...base, card: undefined })).toBe('card is required');
    expect(await msg({ ...base, card: card(TEST_CARDS.otpOnly, { cvv: undefined }) })).toBe('cvv is required');
    expect(await msg({ ...base, card: card(TEST_CARDS.otpOnly, { cvv: '' }) })).toBe('cvv is not allowed to be empty');
    expect(await msg({ ...base, card: card('4111111111111112') })).toBe('Invalid card number');
    expect(await msg({ ...base, card: card('4111111111111111') })).toMatch(/^Card not supported in the sandbox/);
    expect(await msg({ ...base, card: card(TEST_CARDS.otpOnly, { expiry_year: '20' }) })).toBe('Card expired');
    expect(await msg({ ...base, amount: -5 })).toMatch(/amount must be a positive integer/);
    expect(await msg({ ...base, payment_method: 'cash' })).toBe('payment_method must be card, bank or ussd');
    const ref = uid('d-');
    expect((await chargeCard(ref, TEST_CARDS.otpOnly)).status).toBe(200);
    expect(await chargeCard(ref, TEST_CARDS.otpOnly)).toMatchObject({
      status: 400,
      body: { message: 'Duplicate transaction reference' },
    });
    expect(await authorize('no-such-ref', { otp: SANDBOX_OTP })).toMatchObject({
      status: 400,
      body: { message: 'Transaction not found' },
    });
  });

  it('generates a reference when none is given', async () => {
    const r = await env.api.post('/transaction/initiate/process-payment', {
      amount: 1000,
      payment_method: 'card',
      customer,
      card: card(TEST_CARDS.otpOnly),
    });
    expect(r.body!.data.transaction_ref).toMatch(/^SBX\d{14}$/);
  });
});

describe('3DS', () => {
  it('auth_url is a real page; its form completes the challenge, sends the payment webhook and redirects to redirect_url with ?reference=', async () => {
    const ref = uid('3ds-');
    const r = await chargeCard(ref, TEST_CARDS.threeDs);
    expect(r.body!.data).toMatchObject({ transaction_status: 'ThreeDSecure', auth_url: `${env.sb.url}/3ds/${ref}` });
    const page = await fetch(r.body!.data.auth_url as string);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain(`<form method="post" action="/3ds/${ref}/complete">`);
    expect(html).not.toContain(TEST_CARDS.threeDs);
    expect(await verify(ref)).toBe('Pending');
    expect((await authorize(ref, { otp: SANDBOX_OTP })).status).toBe(400);
    const done = await fetch(`${env.sb.url}/3ds/${ref}/complete`, { method: 'POST', redirect: 'manual' });
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe(`https://merchant.example/return?x=1&reference=${ref}`);
    expect(await verify(ref)).toBe('Success');
    await receiver.waitFor(ref);
    expect((await fetch(`${env.sb.url}/3ds/${ref}/complete`, { method: 'POST', redirect: 'manual' })).status).toBe(404); // once only
  });

  it('failing the challenge fails the payment; the admin API can complete one too', async () => {
    const failed = uid('3f-');
    await chargeCard(failed, TEST_CARDS.threeDs);
    expect((await fetch(`${env.sb.url}/3ds/${failed}/fail`, { method: 'POST' })).status).toBe(200);
    expect(await verify(failed)).toBe('Failed');
    const viaAdmin = uid('3a-');
    await chargeCard(viaAdmin, TEST_CARDS.threeDs, { redirect_url: undefined });
    expect(await env.api.admin.post(`/3ds/${viaAdmin}/complete`)).toMatchObject({
      status: 200,
      body: { data: { outcome: 'complete' } },
    });
    expect(await verify(viaAdmin)).toBe('Success');
    expect((await env.api.admin.post('/3ds/nope/complete')).status).toBe(404);
  });
});

describe('bank debit (B3/B4)', () => {
  const bank = (ref: string, account: string, over: Record<string, unknown> = {}) =>
    env.api.post('/transaction/initiate/process-payment', {
      transaction_reference: ref,
      amount: 250_000,
      currency: 'NGN',
      payment_method: 'bank',
      customer,
      bank: { bank_code: '058', account_or_phoneno: account },
      ...over,
    });
  const validate = (ref: string, otp_token: string) =>
    env.api.post('/transaction/validate-payment', { transaction_reference: ref, authorization: { otp_token } });

  it.each([
    ['1234567890', 'ValidateTOKEN'],
    ['0123456789', 'ValidateOTP'],
    ['08012345678', 'ValidateOTP'],
  ])(
    'account %s → %s; the right code answers the same auth_model with "Charge attempted" and completes',
    async (account, model) => {
      const ref = uid('bk-');
      expect((await bank(ref, account)).body!.data).toMatchObject({
        auth_model: model,
        transaction_type: 'Bank',
        transaction_ref: ref,
      });
      expect(await validate(ref, '000000')).toMatchObject({ status: 400, body: { message: 'Invalid OTP or token' } });
      expect(await verify(ref)).toBe('Pending');
      expect(await validate(ref, SANDBOX_OTP)).toMatchObject({
        status: 200,
        body: {
          message: 'Charge attempted',
          data: { auth_model: model, message: 'Charge attempted', transaction_status: 'Success' },
        },
      });
      expect(await verify(ref)).toBe('Success');
      expect(env.sb.ledger({ reference: ref })).toEqual([
        expect.objectContaining({ kind: 'bank_debit', amount: 250_000 }),
      ]);
      expect((await receiver.waitFor(ref))[0].json.Body).toMatchObject({
        transaction_type: 'Bank',
        payment_information: { payment_type: 'bank' },
      });
    },
  );

  it('validates the bank fields; only the partner bank 058; an insufficient-funds account fails after the code', async () => {
    expect((await bank(uid('b-'), '')).body!.message).toBe('account_or_phoneno is not allowed to be empty');
    expect(
      (
        await env.api.post('/transaction/initiate/process-payment', {
          amount: 100,
          payment_method: 'bank',
          customer,
          bank: { bank_code: '058' },
        })
      ).body!.message,
    ).toBe('account_or_phoneno is required');
    expect(
      (await bank(uid('b-'), '0123456789', { bank: { bank_code: '044', account_or_phoneno: '0123456789' } })).status,
    ).toBe(400);
    const nsf = uid('bn-');
    await bank(nsf, BANK_INSUFFICIENT_FUNDS_ACCOUNT);
    expect(await validate(nsf, SANDBOX_OTP)).toMatchObject({ status: 400, body: { message: 'Insufficient funds' } });
    expect(await verify(nsf)).toBe('Failed');
    expect(
      (await env.api.post('/transaction/validate-payment', { transaction_reference: nsf, authorization: {} })).body!
        .message,
    ).toBe('otp_token is required');
  });
});

describe('field names and checks as the spec writes them', () => {
  it("the bank debit (B3) with the parameter table's flat names (email, name, bank_code, account_or_phone) is the same debit; the validation (B4) takes otp_token at the top level too", async () => {
    const ref = uid('flat-');
    const res = await env.api.post('/transaction/initiate/process-payment', {
      transaction_reference: ref,
      amount: 250_000,
      currency: 'NGN',
      payment_method: 'bank',
      email: 'ada@example.com',
      name: 'Ada Obi',
      bank_code: '058',
      account_or_phone: '0123456789',
    });
    expect(res).toMatchObject({ status: 200, body: { data: { auth_model: 'ValidateOTP', transaction_ref: ref } } });
    expect(
      await env.api.post('/transaction/validate-payment', { transaction_reference: ref, otp_token: SANDBOX_OTP }),
    ).toMatchObject({ status: 200, body: { message: 'Charge attempted' } });
    expect(await verify(ref)).toBe('Success');
    expect(env.sb.ledger({ reference: ref })).toHaveLength(1);
  });

  it('a malformed request gets its field error whatever it refers to (checked before the lookup)', async () => {
    // An authorize (B2) for a reference nobody knows: the missing code is named, not "Transaction not found".
    expect(
      (
        await env.api.post('/transaction/payment/authorize', {
          transaction_reference: uid('nobody-'),
          authorization: {},
        })
      ).body!.message,
    ).toBe('authorization.pin or authorization.otp is required');
    // A bank validation (B4) likewise.
    expect(
      (await env.api.post('/transaction/validate-payment', { transaction_reference: uid('nobody-') })).body!.message,
    ).toBe('authorization is required');
    // A purchase (H3) with a bad amount and an unknown reference: the amount is named.
    expect(
      (
        await env.api.post('/vending/utilities/electricity', {
          reference: 'no-such-lookup',
          amount: 1.5,
          phone_number: '08012345678',
          email: 'a@example.com',
        })
      ).body!.message,
    ).toBe('amount must be a whole number of naira greater than 0');
  });
});

describe('USSD (B5)', () => {
  const ussd = (ref: string, bank_code = '058') =>
    env.api.post('/transaction/initiate/process-payment', {
      transaction_reference: ref,
      amount: 150_000,
      currency: 'NGN',
      payment_method: 'ussd',
      customer,
      ussd: { bank_code },
    });

  it('generates a code with an expiry; the payer dials before it → Success with the payment webhook', async () => {
    const ref = uid('us-');
    const r = await ussd(ref);
    expect(r.body).toMatchObject({
      message: 'USSD Payment Reference Generated',
      data: { auth_model: 'USSDCodeGenerated', message: 'USSD Payment Reference Generated', transaction_type: 'Ussd' },
    });
    const details = r.body!.data.ussd_details as { ussd_reference: string; expiresAt: string };
    expect(details.ussd_reference).toMatch(/^\*058\*000\*\d{6}#$/);
    expect(
      Date.parse(details.expiresAt) - Date.parse((await env.api.admin.get('/clock')).body!.data.now as string),
    ).toBeGreaterThan(STEP_LIFETIME_MS - 5000);
    expect(await verify(ref)).toBe('Pending');
    expect(await env.api.admin.post(`/ussd/${ref}/pay`, { phone: '08031234567' })).toMatchObject({
      status: 200,
      body: { data: { paid: true } },
    });
    expect(await verify(ref)).toBe('Success');
    expect(env.sb.ledger({ reference: ref })).toEqual([expect.objectContaining({ kind: 'ussd' })]);
    expect((await receiver.waitFor(ref))[0].json.Body).toMatchObject({
      transaction_type: 'Ussd',
      customer_mobile: '0803****567',
      payment_information: { payment_type: 'ussd', customer_ref: details.ussd_reference },
    });
    expect((await env.api.admin.post(`/ussd/${ref}/pay`)).status).toBe(400); // paid once only
  });

  it('after the expiry the payment is Abandoned and dialling is refused; an unlisted bank code is 400', async () => {
    const ref = uid('ux-');
    await ussd(ref);
    await env.api.admin.advance(STEP_LIFETIME_MS + 1000);
    expect(await verify(ref)).toBe('Abandoned');
    expect(await env.api.admin.post(`/ussd/${ref}/pay`)).toMatchObject({
      status: 400,
      body: { message: 'No USSD payment pending for that reference' },
    });
    expect((await ussd(uid('uy-'), '999')).body!.message).toBe('bank_code is not a supported USSD bank code');
  });
});

it('verify: 400 for an unknown reference', async () => {
  expect(await env.api.get('/transaction/verify/never-seen')).toMatchObject({
    status: 400,
    body: { success: false, message: 'Transaction never-seen not found' },
  });
});
