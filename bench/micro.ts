// Micro benchmarks (`npm run bench:micro`): the per-call costs of the codec, HMAC and redaction.
// They print figures and assert nothing; `npm run bench` (bench/run.ts) measures whole flows.
//   codec:     AES-256-GCM encode+decode throughput for a typical payment payload
//   webhook:   HMAC-SHA512 signature verification of an E-1 body
//   redaction: log-line redaction cost
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from '../src/codec/aes-gcm-codec';
import { hmacSha512Hex, verifyPaymentWebhook } from '../src/webhooks/signatures';
import { createLogger } from '../src/logging/logger';

async function measure(name: string, iterations: number, fn: () => unknown | Promise<unknown>): Promise<void> {
  for (let i = 0; i < Math.min(200, iterations); i++) await fn(); // warm-up
  const start = performance.now();
  for (let i = 0; i < iterations; i++) await fn();
  const ms = performance.now() - start;
  console.log(
    `${name.padEnd(42)} ${(iterations / (ms / 1000)).toFixed(0).padStart(10)} ops/s   ${((ms * 1000) / iterations).toFixed(1).padStart(8)} µs/op`,
  );
}

async function main(): Promise<void> {
  const payload = defaultPayloadConverter.toPayload({
    transactionRef: 'ord-1001',
    amount: 1_500_000,
    currency: 'NGN',
    card: { number: '5555555555554444', cvv: '123', expiry_month: '12', expiry_year: '29' },
    customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    metadata: { order: 'A-1', items: Array.from({ length: 10 }, (_, i) => ({ sku: `SKU-${i}`, qty: i })) },
  });
  const codec = new AesGcmPayloadCodec([{ id: 'k1', key: randomBytes(32) }]);
  const [encoded] = await codec.encode([payload]);
  console.log(`payload size: ${payload.data?.length} bytes plain, ${encoded.data?.length} bytes encrypted`);
  await measure('codec encode (1 payload)', 20_000, () => codec.encode([payload]));
  await measure('codec decode (1 payload)', 20_000, () => codec.decode([encoded]));

  const body = Buffer.from(
    JSON.stringify({
      Event: 'charge_successful',
      TransactionRef: 'ord-1001',
      Body: { amount: 10000, transaction_ref: 'ord-1001', meta: {} },
    }),
  );
  const key = 'sandbox_sk_local_development_key_0001';
  const sig = hmacSha512Hex(key, body).toUpperCase();
  await measure('webhook E-1 signature verification', 50_000, () => verifyPaymentWebhook(body, sig, key));

  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const logger = createLogger({ destination: sink });
  await measure('log line with nested secrets (redacted)', 50_000, () =>
    logger.info(
      {
        request: { card: { number: '5555555555554444', cvv: '123' }, amount: 10000 },
        headers: { authorization: `Bearer ${key}` },
      },
      'charging',
    ),
  );
}

void main();
