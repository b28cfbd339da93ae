// Signing and verifying merchant events with Standard Webhooks (the `standardwebhooks` package):
// headers webhook-id, webhook-timestamp and webhook-signature (`v1,` + base64 HMAC-SHA256 of
// `id.timestamp.body`) under a `whsec_` secret. Exported for merchants (src/notify/index.ts): the
// example backend and `cli notify listen` verify with the same code the worker signs with.
// Rotation: NOTIFY_SECRET may list several secrets; each signs, and the header carries every
// signature space-separated (`v1,<a> v1,<b>`), so a merchant that knows either secret verifies.
import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { merchantEventSchema, type MerchantEvent } from '../shared/merchant-event';
import { notifySecretEntries } from './secrets';

export { WebhookVerificationError };

export { NOTIFY_SECRET_PATTERN, notifySecretEntries, notifySecretIssue } from './secrets';

export interface SignedEvent {
  body: string;
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };
}

/**
 * The exact bytes sent and their headers; `at` is the attempt's time (the timestamp is per attempt).
 * With several secrets, one signature per secret in the header, space-separated.
 */
export function signEvent(
  secrets: string | readonly string[],
  event: MerchantEvent,
  at: Date = new Date(),
): SignedEvent {
  const body = JSON.stringify(event);
  const list = typeof secrets === 'string' ? notifySecretEntries(secrets) : secrets;
  if (list.length === 0) throw new Error('no signing secret');
  const signature = list.map((secret) => new Webhook(secret).sign(event.id, at, body)).join(' ');
  return {
    body,
    headers: {
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    },
  };
}

/**
 * Verifies a received event on its raw body under any of the secrets (the signature, and a timestamp within 5 minutes of now,
 * as the package checks) and validates the body against the event schema. Throws
 * WebhookVerificationError for a bad signature or timestamp, and an Error naming the field and rule
 * for a body that is not an event.
 */
export function verifyEvent(
  secrets: string | readonly string[],
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined>,
): MerchantEvent {
  const flat: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const v = headers[name];
    flat[name] = Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
  }
  const parsed = verifyWithAny(typeof secrets === 'string' ? notifySecretEntries(secrets) : secrets, rawBody, flat);
  const event = merchantEventSchema.safeParse(parsed);
  if (!event.success)
    throw new Error(
      `not a merchant event: ${event.error.issues.map((i) => `${i.path.join('.') || 'body'} ${i.message}`).join('; ')}`,
    );
  if (event.data.id !== flat['webhook-id']) throw new Error('not a merchant event: id differs from webhook-id');
  return event.data as MerchantEvent;
}

/** The payload under the first secret that verifies it; the last secret's error when none does. */
function verifyWithAny(secrets: readonly string[], rawBody: string | Buffer, headers: Record<string, string>): unknown {
  let lastError: unknown = new WebhookVerificationError('no verifying secret');
  for (const secret of secrets) {
    try {
      return new Webhook(secret).verify(rawBody, headers);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

/** A new random secret in the Standard Webhooks shape (for `.env` and tests). */
export function newNotifySecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
