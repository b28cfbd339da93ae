// Merchant events are Standard Webhooks: what the worker signs, a merchant verifies with the same
// package; a tampered, stale or wrongly signed message is refused, and so is a body that is not an
// event. The signature is checked against the spec's own recipe (HMAC-SHA256 of id.timestamp.body
// under the base64 key after whsec_), not only against the package.
import { createHmac } from 'node:crypto';
import {
  newNotifySecret,
  signEvent,
  verifyEvent,
  WebhookVerificationError,
  type MerchantEvent,
} from '../../src/notify';
import { merchantEventId } from '../../src/shared/merchant-event';
import { loadConfig } from '../../src/config/config';
import { configIssues } from '../support/config';

const secret = newNotifySecret();
const event: MerchantEvent = {
  type: 'payment.succeeded',
  id: merchantEventId('payment-ord-1', 'payment.succeeded'),
  created_at: '2026-11-26T15:00:00.000Z',
  data: {
    version: 1,
    flow: 'card',
    reference: 'ord-1',
    status: 'success',
    amount: 150_000,
    currency: 'NGN',
    sequence: 1,
    occurred_at: '2026-11-26T15:00:00.000Z',
  },
};

describe('signing', () => {
  it('signs id.timestamp.body with HMAC-SHA256 under the whsec_ key, v1-prefixed base64', () => {
    const at = new Date();
    const signed = signEvent(secret, event, at);
    expect(signed.headers['webhook-id']).toBe(event.id);
    expect(signed.headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key)
      .update(`${event.id}.${signed.headers['webhook-timestamp']}.${signed.body}`)
      .digest('base64');
    expect(signed.headers['webhook-signature']).toBe(`v1,${expected}`);
    expect(JSON.parse(signed.body)).toEqual(event);
  });

  it('verifies what it signed and returns the event', () => {
    const signed = signEvent(secret, event);
    expect(verifyEvent(secret, signed.body, signed.headers)).toEqual(event);
    expect(verifyEvent(secret, Buffer.from(signed.body), signed.headers)).toEqual(event);
  });
});

describe('verification refuses', () => {
  it('a tampered body', () => {
    const signed = signEvent(secret, event);
    const tampered = signed.body.replace('150000', '1500000');
    expect(tampered).not.toBe(signed.body);
    expect(() => verifyEvent(secret, tampered, signed.headers)).toThrow(WebhookVerificationError);
  });

  it('another id under the same signature (a replay as a different event)', () => {
    const signed = signEvent(secret, event);
    expect(() => verifyEvent(secret, signed.body, { ...signed.headers, 'webhook-id': 'evt_other' })).toThrow(
      WebhookVerificationError,
    );
  });

  it('an expired message (timestamp outside the 5-minute tolerance) and one from the future', () => {
    const old = signEvent(secret, event, new Date(Date.now() - 10 * 60_000));
    expect(() => verifyEvent(secret, old.body, old.headers)).toThrow(WebhookVerificationError);
    const future = signEvent(secret, event, new Date(Date.now() + 10 * 60_000));
    expect(() => verifyEvent(secret, future.body, future.headers)).toThrow(WebhookVerificationError);
  });

  it('another secret, and missing headers', () => {
    const signed = signEvent(secret, event);
    expect(() => verifyEvent(newNotifySecret(), signed.body, signed.headers)).toThrow(WebhookVerificationError);
    expect(() => verifyEvent(secret, signed.body, {})).toThrow(WebhookVerificationError);
  });

  it('a correctly signed body that is not an event, naming the field and the rule', () => {
    const bad = { ...event, data: { ...event.data, amount: 1500.5 } } as MerchantEvent;
    const signed = signEvent(secret, bad);
    expect(() => verifyEvent(secret, signed.body, signed.headers)).toThrow(
      'not a merchant event: data.amount must be an integer in the lowest unit',
    );
  });
});

describe('settings', () => {
  const base = { NOTIFY_URL: 'http://127.0.0.1:4999/events' };

  it('refuses NOTIFY_SECRET without the whsec_ prefix, naming the variable and the rule', () => {
    const issues = configIssues({ ...base, NOTIFY_SECRET: 'x'.repeat(48) });
    expect(issues).toContainEqual({
      variable: 'NOTIFY_SECRET',
      message: 'must start with whsec_ followed by base64 of at least 24 bytes',
    });
  });

  it('requires NOTIFY_SECRET with NOTIFY_URL, and a NOTIFY_RETRY_FOR of at least a minute', () => {
    expect(configIssues(base)).toContainEqual({
      variable: 'NOTIFY_SECRET',
      message: 'is required when NOTIFY_URL is set (every event is signed)',
    });
    expect(configIssues({ ...base, NOTIFY_SECRET: secret, NOTIFY_RETRY_FOR: '30s' })).toContainEqual({
      variable: 'NOTIFY_RETRY_FOR',
      message: 'must be at least 1 minute',
    });
    expect(configIssues({ ...base, NOTIFY_SECRET: secret, NOTIFY_RETRY_FOR: 'soon' })).toContainEqual({
      variable: 'NOTIFY_RETRY_FOR',
      message: 'must be a duration such as "3d", "12h" or "30m"',
    });
    expect(loadConfig({ ...base, NOTIFY_SECRET: secret, NOTIFY_RETRY_FOR: '12h' }).notify).toEqual({
      url: base.NOTIFY_URL,
      secret,
      retryForMs: 12 * 3_600_000,
      allowPrivate: true,
    });
    expect(loadConfig({}).notify).toEqual({ retryForMs: 3 * 86_400_000, allowPrivate: true });
  });
});
