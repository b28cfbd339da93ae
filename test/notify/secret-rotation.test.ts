// Rotating NOTIFY_SECRET (issue #42 §1, docs/security.md "Rotating NOTIFY_SECRET"): with several
// secrets each signs, the webhook-signature header carries every signature space-separated, and a
// merchant that knows only the new secret or only the old one verifies the same request.
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../src/config/config';
import { newNotifySecret, notifySecretEntries, signEvent, verifyEvent, type MerchantEvent } from '../../src/notify';
import { merchantEventId } from '../../src/shared/merchant-event';
import { configIssues } from '../support/config';

const oldSecret = newNotifySecret();
const newSecret = newNotifySecret();
const at = new Date().toISOString();
const event: MerchantEvent = {
  type: 'payment.succeeded',
  id: merchantEventId('payment-ord-rot-1', 'payment.succeeded'),
  created_at: at,
  data: { version: 1, flow: 'card', reference: 'ord-rot-1', status: 'success', sequence: 1, occurred_at: at },
};

describe('several signing secrets', () => {
  it.each([
    ['comma', `${newSecret},${oldSecret}`],
    ['space', `${newSecret} ${oldSecret}`],
    ['comma and space', ` ${newSecret}, ${oldSecret} `],
  ])('signs with each (%s separated): one v1 signature per secret, space-separated', (_how, raw) => {
    const signed = signEvent(raw, event);
    const signatures = signed.headers['webhook-signature'].split(' ');
    expect(signatures).toHaveLength(2);
    for (const s of signatures) expect(s).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(notifySecretEntries(raw)).toEqual([newSecret, oldSecret]);
  });

  it('verifies for a merchant that knows only the new secret, and for one that knows only the old one', () => {
    const signed = signEvent(`${newSecret},${oldSecret}`, event);
    // The package itself, as a merchant's backend in any language would use it.
    expect(new Webhook(newSecret).verify(signed.body, signed.headers)).toEqual(event);
    expect(new Webhook(oldSecret).verify(signed.body, signed.headers)).toEqual(event);
    expect(verifyEvent(newSecret, signed.body, signed.headers)).toEqual(event);
    expect(verifyEvent(oldSecret, signed.body, signed.headers)).toEqual(event);
    expect(() => verifyEvent(newNotifySecret(), signed.body, signed.headers)).toThrow();
  });

  it("verifies under a list too (`notify listen` given the worker's NOTIFY_SECRET)", () => {
    const signed = signEvent(oldSecret, event);
    expect(verifyEvent(`${newSecret} ${oldSecret}`, signed.body, signed.headers)).toEqual(event);
  });
});

describe('NOTIFY_SECRET as a list', () => {
  it('is accepted, and kept as given (each entry signs)', () => {
    const raw = `${newSecret},${oldSecret}`;
    expect(loadConfig({ NOTIFY_URL: 'http://127.0.0.1:4999/e', NOTIFY_SECRET: raw }).notify.secret).toBe(raw);
  });

  it('names the malformed entry by position and the rule, never its value', () => {
    const issues = configIssues({ NOTIFY_SECRET: `${newSecret}, whsec_short, ${oldSecret}` });
    expect(issues).toContainEqual({
      variable: 'NOTIFY_SECRET',
      message: 'entry 2 of 3: must start with whsec_ followed by base64 of at least 24 bytes',
    });
    expect(JSON.stringify(issues)).not.toContain('whsec_short');
  });
});

describe('NOTIFY_ALLOWED_HOSTS and NOTIFY_ALLOW_PRIVATE', () => {
  it('are read into the notify settings (hosts lower case)', () => {
    const notify = loadConfig({
      NOTIFY_ALLOWED_HOSTS: 'Hooks.example.com, events.example.com.',
      NOTIFY_ALLOW_PRIVATE: 'false',
    }).notify;
    expect(notify).toMatchObject({ allowedHosts: ['hooks.example.com', 'events.example.com'], allowPrivate: false });
  });

  it('refuse a NOTIFY_URL whose host is not listed, naming the variable', () => {
    expect(
      configIssues({
        NOTIFY_URL: 'http://other.example.com/e',
        NOTIFY_SECRET: newSecret,
        NOTIFY_ALLOWED_HOSTS: 'hooks.example.com',
      }),
    ).toContainEqual({ variable: 'NOTIFY_URL', message: 'must name a host of NOTIFY_ALLOWED_HOSTS' });
  });
});
