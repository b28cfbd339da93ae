// The USSD code has one form (src/sandbox/direct.ts, ussdCode): `*<bank code>*000*<six digits>#`, issued
// alike by the direct USSD payment (B5) and the checkout's USSD channel. The spec shows only "USSD code
// string", so any six digits are a code: the lowest and highest draws of the random source must come
// back as 000000 and 999999 from both, a leading 0 kept.
import { ussdCode } from '../../src/sandbox/direct';
import { useSandbox, uid, type Json } from './helpers';

const env = useSandbox();

/** Runs `issue` with the random source pinned to `draw` until it settles (references are made before). */
async function withRandom<T>(draw: number, issue: () => T | Promise<T>): Promise<T> {
  const random = jest.spyOn(Math, 'random').mockReturnValue(draw);
  try {
    return await issue();
  } finally {
    random.mockRestore();
  }
}

/** The direct USSD payment's code (B5), its random digits drawn as `draw`. */
async function directCode(bank_code: string, draw: number): Promise<string> {
  const body = {
    transaction_reference: uid('uc-'),
    amount: 150_000,
    currency: 'NGN',
    payment_method: 'ussd',
    customer: { name: 'Ada Obi', email: 'ada@example.com' },
    ussd: { bank_code },
  };
  const r = await withRandom(draw, () => env.api.post('/transaction/initiate/process-payment', body));
  expect(r.status).toBe(200);
  return (r.body!.data.ussd_details as { ussd_reference: string }).ussd_reference;
}

/** The checkout USSD channel's code (A1, then the modal's USSD channel), its random digits drawn as `draw`. */
async function checkoutCode(bank_code: string, draw: number): Promise<string> {
  const ref = uid('cc-');
  const started = await env.api.post('/transaction/initiate', {
    amount: '250000',
    email: 'ada@example.com',
    currency: 'NGN',
    initiate_type: 'inline',
    transaction_ref: ref,
  });
  expect(started.status).toBe(200);
  const r = await withRandom(draw, () => env.api.call('POST', `/checkout/${ref}/ussd`, { bank_code }, { key: null }));
  expect(r.status).toBe(200);
  return (r.body!.data as Json).ussd_reference as string;
}

it('ussdCode: the bank code, 000 and six digits, a leading 0 kept', async () => {
  expect(await withRandom(0, () => ussdCode('058'))).toBe('*058*000*000000#');
  expect(await withRandom(0.9999999, () => ussdCode('50211'))).toBe('*50211*000*999999#');
  for (let i = 0; i < 200; i++) expect(ussdCode('00103')).toMatch(/^\*00103\*000\*\d{6}#$/);
});

it('the direct USSD payment (B5) and the checkout USSD channel issue the same form, a leading 0 kept', async () => {
  expect(await directCode('058', 0)).toBe('*058*000*000000#');
  expect(await checkoutCode('044', 0)).toBe('*044*000*000000#');
  expect(await directCode('044', 0.9999999)).toBe('*044*000*999999#');
  expect(await checkoutCode('058', 0.9999999)).toBe('*058*000*999999#');
});
