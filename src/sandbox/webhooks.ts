// Outgoing notifications: the payment webhook (E-1, `charge_successful`) and the virtual-account
// credit notification (E-2). Both are POSTed as JSON to the webhook URL, signed, recorded attempt by attempt, and
// retried on the retry schedule (sandbox clock) until acknowledged:
//   payment webhook: header x-service-encrypted-body = HMAC-SHA512(raw body bytes, secret key), UPPERCASE hex;
//        acknowledged by any 2xx.
//   credit notification: header x-service-signature (v1: HMAC-SHA512 of the raw body, UPPERCASE hex; v2/v3:
//        HMAC-SHA512 of the six pipe-joined values, lowercase hex); acknowledged only by a 2xx
//        whose body is {response_code: 200, transaction_reference, response_description: 'Success'}.
// Webhook faults (duplicate, fail, hold) apply here.
import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import type { SandboxClock } from './clock';
import type { WebhookFaults, WebhookTarget } from './faults';
import type { SandboxLogger } from './http';

export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000];
export const PAYMENT_SIGNATURE_HEADER = 'x-service-encrypted-body';
export const VA_SIGNATURE_HEADER = 'x-service-signature';
const DELIVERY_TIMEOUT_MS = 10_000;

export interface Notification {
  target: WebhookTarget;
  /** Payment webhook: TransactionRef; credit notification: transaction_reference. */
  ref: string;
  url: string;
  raw: Buffer;
  headers: Record<string, string>;
  /** Whether the receiver's answer counts as an acknowledgement. */
  acknowledged(status: number, body: string): boolean;
  /** Called after each unacknowledged attempt (a credit notification writes the error log). */
  onUnacknowledged?(): void;
  /** Checked before each retry (a credit notification stops once the error-log entry was deleted). */
  keepRetrying?(): boolean;
}

export interface DeliveryAttempt {
  id: string;
  target: WebhookTarget;
  event: 'charge_successful' | 'virtual_account_credit';
  ref: string;
  /** 1 for the first delivery, 2 for the first retry... A duplicate repeats the attempt number. */
  attempt: number;
  at: string;
  /** HTTP status of the receiver's answer, 'error' when no answer came, 'fault' when a fail fault suppressed the attempt. */
  status: number | 'error' | 'fault';
  acknowledged: boolean;
  duplicate?: boolean;
  /** When the next retry is due (sandbox clock), if one is scheduled. */
  nextRetryAt?: string;
}

export class WebhookDispatcher {
  private attempts: DeliveryAttempt[] = [];
  private held: Notification[] = [];
  private readonly agent = new Agent({ keepAliveTimeout: 1_000, connect: { timeout: 5_000 } });

  constructor(
    private readonly clock: SandboxClock,
    private readonly faults: WebhookFaults,
    private readonly retryScheduleMs: readonly number[],
    private readonly logger?: SandboxLogger,
  ) {}

  /** HMAC-SHA512 hex of `data` keyed with the secret key. */
  static hmac(key: string, data: string | Buffer): string {
    return createHmac('sha512', key).update(data).digest('hex');
  }

  /** The payment webhook (E-1) to `url`, signed with the key that made the payment. */
  sendPayment(url: string, ref: string, body: Record<string, unknown>, key: string): void {
    const raw = Buffer.from(JSON.stringify(body), 'utf8');
    this.dispatch({
      target: 'payment',
      ref,
      url,
      raw,
      headers: { [PAYMENT_SIGNATURE_HEADER]: WebhookDispatcher.hmac(key, raw).toUpperCase() },
      acknowledged: (status) => status >= 200 && status < 300,
    });
  }

  /** The credit notification (E-2) to `url`; `sign` gets the exact raw body. */
  sendVirtualAccount(
    url: string,
    ref: string,
    body: Record<string, unknown>,
    sign: (raw: Buffer) => string,
    hooks: { onUnacknowledged(): void; keepRetrying(): boolean },
  ): void {
    const raw = Buffer.from(JSON.stringify(body), 'utf8');
    this.dispatch({
      target: 'virtual-account',
      ref,
      url,
      raw,
      headers: { [VA_SIGNATURE_HEADER]: sign(raw) },
      acknowledged: (status, text) => {
        if (status < 200 || status >= 300) return false;
        try {
          const ack = JSON.parse(text) as Record<string, unknown>;
          return (
            Number(ack.response_code) === 200 &&
            ack.transaction_reference === ref &&
            ack.response_description === 'Success'
          );
        } catch {
          return false;
        }
      },
      ...hooks,
    });
  }

  private dispatch(n: Notification): void {
    if (this.faults.take('hold', n.target)) {
      this.held.push(n);
      this.logger?.info({ target: n.target, ref: n.ref }, 'sandbox webhook held (fault)');
      return;
    }
    void this.clock.track(this.deliver(n));
  }

  /** The first attempt, and its duplicate when a duplicate fault applies. */
  private async deliver(n: Notification): Promise<void> {
    const duplicate = this.faults.take('duplicate', n.target);
    await this.attempt(n, 1);
    if (duplicate) await this.attempt(n, 1, true);
  }

  /** Sends the held notifications, newest first, one after the other (a duplicate fault applies as to any); returns how many. */
  releaseHeld(): number {
    const held = this.held.splice(0).reverse();
    void this.clock.track(held.reduce((prev, n) => prev.then(() => this.deliver(n)), Promise.resolve()));
    return held.length;
  }

  heldCount(): number {
    return this.held.length;
  }

  private async attempt(n: Notification, attempt: number, duplicate = false): Promise<void> {
    const entry: DeliveryAttempt = {
      id: randomUUID(),
      target: n.target,
      event: n.target === 'payment' ? 'charge_successful' : 'virtual_account_credit',
      ref: n.ref,
      attempt,
      at: this.clock.iso(),
      status: 'error',
      acknowledged: false,
      ...(duplicate ? { duplicate: true } : {}),
    };
    if (!duplicate && this.faults.take('fail', n.target)) {
      entry.status = 'fault';
    } else {
      try {
        const res = await request(n.url, {
          method: 'POST',
          body: n.raw,
          headers: { 'content-type': 'application/json', ...n.headers },
          dispatcher: this.agent,
          headersTimeout: DELIVERY_TIMEOUT_MS,
          bodyTimeout: DELIVERY_TIMEOUT_MS,
        });
        const text = await res.body.text();
        entry.status = res.statusCode;
        entry.acknowledged = n.acknowledged(res.statusCode, text);
      } catch {
        entry.status = 'error';
      }
    }
    this.attempts.push(entry);
    if (entry.acknowledged || duplicate) return;
    n.onUnacknowledged?.();
    this.logger?.warn(
      { target: n.target, ref: n.ref, attempt, status: entry.status },
      'sandbox webhook not acknowledged',
    );
    const delay = this.retryScheduleMs[attempt - 1];
    if (delay === undefined) return;
    const due = this.clock.now() + delay;
    entry.nextRetryAt = this.clock.iso(due);
    this.clock.at(due, () => (n.keepRetrying && !n.keepRetrying() ? undefined : this.attempt(n, attempt + 1)));
  }

  deliveries(filter: { ref?: string | null; target?: string | null } = {}): DeliveryAttempt[] {
    return this.attempts
      .filter((a) => (!filter.ref || a.ref === filter.ref) && (!filter.target || a.target === filter.target))
      .map((a) => ({ ...a }));
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
