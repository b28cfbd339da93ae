// The USSD bank codes have one home (src/api/schemas/direct.ts): the sandbox's USSD payment and the client's
// request schema must accept and refuse the same codes, listed or not.
import { DirectInitiateUssdRequestSchema, USSD_BANK_CODES } from '../../src/api/schemas/direct';
import { USSD_BANK_CODES as SANDBOX_USSD_BANK_CODES } from '../../src/sandbox';
import { useSandbox, uid } from './helpers';

const env = useSandbox();

/** Near misses of listed codes (a digit short or long, padded, spaced) and plain strangers. */
const UNLISTED: unknown[] = ['999', '58', '0058', '00104', '5021', '502110', '0631', '', ' 058', '058 ', 'abc', 58];

const request = (bank_code: unknown) => ({
  transaction_reference: uid('ub-'),
  amount: 150_000,
  currency: 'NGN',
  payment_method: 'ussd',
  customer: { name: 'Ada Obi', email: 'ada@example.com' },
  ussd: { bank_code },
});

async function sandboxAccepts(bankCode: unknown): Promise<boolean> {
  const r = await env.api.post('/transaction/initiate/process-payment', request(bankCode));
  if (r.status !== 200) expect(r.body!.message).toMatch(/^bank_code /);
  return r.status === 200;
}

const clientAccepts = (bankCode: unknown): boolean => {
  const { payment_method: _method, ...body } = request(bankCode);
  return DirectInitiateUssdRequestSchema.safeParse(body).success;
};

it('the sandbox exports the API layer’s list itself, the 23 codes the spec lists', () => {
  expect(SANDBOX_USSD_BANK_CODES).toBe(USSD_BANK_CODES);
  expect(USSD_BANK_CODES).toHaveLength(23);
});

it('the sandbox (B5) and the client schema accept every listed code and refuse the same unlisted ones', async () => {
  const verdicts: Array<{ code: unknown; sandbox: boolean; client: boolean }> = [];
  for (const code of [...USSD_BANK_CODES, ...UNLISTED])
    verdicts.push({ code, sandbox: await sandboxAccepts(code), client: clientAccepts(code) });
  expect(verdicts.filter((v) => v.sandbox !== v.client)).toEqual([]);
  expect(verdicts.filter((v) => v.sandbox).map((v) => v.code)).toEqual([...USSD_BANK_CODES]);
});
