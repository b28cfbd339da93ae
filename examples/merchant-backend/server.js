// @ts-check
// A small merchant backend on plain node:http that takes payments through the @payflow/temporal package.
// It uses ONLY the package's public API: `require('@payflow/temporal/client')` resolves through the
// package's "exports" to the built client entry (dist/starters/client.js, typed by client.d.ts: the
// starters and the events' verification, without the worker's modules), exactly as in a backend
// that installed the package. (Inside this repository Node resolves the name to
// the package itself, "self-reference", so `npm run build` must have run.)
//
//   npm run build && node examples/merchant-backend/server.js     # then open http://127.0.0.1:4040
//
// Configuration is the package's own (docs/configuration.md): TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE,
// PAYLOAD_ENCRYPTION_KEYS, CLAIM_CHECK_DATABASE_URL, CLAIM_CHECK_KEYS, … (the defaults reach `npm start`);
// MERCHANT_BACKEND_PORT (4040, 0 = any free port) and MERCHANT_BACKEND_HOST (127.0.0.1) are this example's.
//
// Routes (JSON in and out; GET / is a page that calls them):
//   POST /api/checkout {amount, email}             → {reference, checkoutUrl}   (hosted checkout: the card never touches us)
//   POST /api/card {amount, name, email, card}     → the card payment's state    (direct card API: your backend is in PCI DSS scope)
//   POST /api/card/:reference/pin {pin}            → the state after the PIN
//   POST /api/card/:reference/otp {otp}            → the state after the OTP
//   GET  /api/payments/:reference                  → the state of a checkout or card payment
//   POST /events                                   ← the payments' events (docs/events.md): verified, then the order moves
//   GET  /api/orders/:reference                    → the order as the events left it: pending, paid, failed, needs_attention
// Orders move from the events the flows push to POST /events (each card payment names it as its
// notify.url), never from polling: payflow.verifyEvent checks each event's Standard Webhooks
// signature (the `standardwebhooks` package, under NOTIFY_SECRET, the worker's secret), an event id
// already handled is acknowledged and ignored, and an event older than the order's (data.sequence) is dropped.
// Card data, PINs and OTPs are passed to the starters, which seal them into the claim-check store;
// this server never logs or echoes them.
'use strict';
const { createServer } = require('node:http');
const { randomUUID } = require('node:crypto');
const payflow = require('@payflow/temporal/client');

const MAX_BODY = 16 * 1024;

/** The orders, as the events left them (a real backend keeps these in its database). @type {Map<string, {reference: string, status: string, sequence: number, amount?: number, currency?: string}>} */
const orders = new Map();
/** Event ids already handled: a redelivery is acknowledged and ignored. */
const handledEvents = new Set();
/** @type {Record<string, string>} what each payment event makes of the order */
const ORDER_STATUS = {
  'payment.succeeded': 'paid',
  'payment.failed': 'failed',
  'payment.expired': 'failed',
  'payment.cancelled': 'failed',
  'payment.needs_attention': 'needs_attention',
};

/** The raw body (the signature covers the exact bytes). @param {import('node:http').IncomingMessage} req @returns {Promise<Buffer>} */
function readRaw(req) {
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) reject(new HttpError(413, 'body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * One event: verified (signature, timestamp, shape), then applied once and in order.
 * @param {Buffer} raw @param {import('node:http').IncomingHttpHeaders} headers @param {string} secret
 * @returns {'applied' | 'duplicate' | 'stale' | 'ignored'}
 */
function applyEvent(raw, headers, secret) {
  /** @type {import('@payflow/temporal/client').MerchantEvent} */
  let event;
  try {
    event = payflow.verifyEvent(secret, raw, /** @type {Record<string, string>} */ (headers));
  } catch {
    throw new HttpError(400, 'not a valid event');
  }
  if (handledEvents.has(event.id)) return 'duplicate';
  handledEvents.add(event.id);
  const status = ORDER_STATUS[event.type];
  const order = orders.get(event.data.reference);
  if (!status || !order) return 'ignored';
  if (event.data.sequence <= order.sequence) return 'stale';
  orders.set(order.reference, { ...order, status, sequence: event.data.sequence });
  return 'applied';
}

/** @param {import('node:http').IncomingMessage} req @returns {Promise<Record<string, any>>} */
function readJson(req) {
  return new Promise((resolve, reject) => {
    let size = 0;
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) reject(new HttpError(413, 'body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
        if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
        resolve(body);
      } catch {
        reject(new HttpError(400, 'the body must be a JSON object'));
      }
    });
    req.on('error', reject);
  });
}

class HttpError extends Error {
  /** @param {number} status @param {string} message @param {unknown} [details] */
  constructor(status, message, details) {
    super(message);
    this.status = status;
    this.details = details;
  }
}

/** @param {import('node:http').ServerResponse} res @param {number} status @param {unknown} body */
function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** What the browser may see of a card payment (no card data is in the state anyway). @param {any} s */
const cardView = (s) => ({
  kind: 'card',
  reference: s.transactionRef,
  status: s.status,
  expects: s.expects ?? null,
  authUrl: s.authUrl ?? null,
  reason: s.reason ?? null,
});
/** @param {any} s */
const checkoutView = (s) => ({
  kind: 'checkout',
  reference: s.transactionRef,
  status: s.status,
  checkoutUrl: s.checkoutUrl ?? null,
});

/** Errors of the starters, mapped to HTTP: bad input 400, a step the flow refused 409/422, a known reference 409. @param {unknown} err */
function toHttpError(err) {
  if (err instanceof HttpError) return err;
  if (err instanceof payflow.StarterInputError) return new HttpError(400, err.message);
  if (err instanceof payflow.DuplicateReferenceError) return new HttpError(409, err.message);
  if (err instanceof payflow.PaymentStepError)
    return new HttpError(err.kind === 'refused' ? 422 : 409, err.message, { kind: err.kind });
  return new HttpError(500, 'internal error');
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Merchant backend (payflow example)</title></head>
<body>
<h1>Pay for your order</h1>
<form id="checkout"><h2>Hosted checkout</h2>
  <label>Amount (kobo) <input name="amount" value="250000"></label> <label>E-mail <input name="email" value="ada@example.com"></label>
  <button>Pay on the checkout page</button></form>
<form id="card"><h2>Card</h2>
  <label>Amount (kobo) <input name="amount" value="800000"></label> <label>Name <input name="name" value="Ada Obi"></label> <label>E-mail <input name="email" value="ada@example.com"></label><br>
  <label>Card number <input name="number" autocomplete="cc-number"></label> <label>CVV <input name="cvv" autocomplete="cc-csc" size="4"></label>
  <label>Expiry <input name="expiryMonth" size="2" placeholder="MM"> / <input name="expiryYear" size="2" placeholder="YY"></label>
  <button>Pay by card</button></form>
<form id="code" hidden><h2 id="code-title"></h2><input name="code" autocomplete="one-time-code"> <button>Send</button></form>
<h2>Result</h2><pre id="result">–</pre>
<script>
const show = (o) => { document.getElementById('result').textContent = JSON.stringify(o, null, 2); };
const call = async (path, body) => { const r = await fetch(path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }); return r.json(); };
let reference;
const follow = async (state) => {
  show(state); reference = state.reference ?? reference;
  const code = document.getElementById('code');
  code.hidden = !(state.expects === 'pin' || state.expects === 'otp' || state.expects === 'pin_or_otp');
  document.getElementById('code-title').textContent = state.expects === 'otp' ? 'OTP' : 'PIN';
  if (state.checkoutUrl) window.open(state.checkoutUrl, '_blank');
  if (state.status && !['success', 'failed', 'expired'].includes(state.status) && code.hidden) setTimeout(async () => follow(await call('/api/payments/' + encodeURIComponent(reference))), 1000);
};
const fields = (form) => Object.fromEntries(new FormData(form));
document.getElementById('checkout').onsubmit = async (e) => { e.preventDefault(); const f = fields(e.target); follow(await call('/api/checkout', { amount: Number(f.amount), email: f.email })); };
document.getElementById('card').onsubmit = async (e) => { e.preventDefault(); const f = fields(e.target);
  follow(await call('/api/card', { amount: Number(f.amount), name: f.name, email: f.email, card: { number: f.number, cvv: f.cvv, expiryMonth: f.expiryMonth, expiryYear: f.expiryYear } })); e.target.reset(); };
document.getElementById('code').onsubmit = async (e) => { e.preventDefault(); const v = fields(e.target).code; e.target.reset();
  const step = document.getElementById('code-title').textContent === 'OTP' ? 'otp' : 'pin';
  follow(await call('/api/card/' + encodeURIComponent(reference) + '/' + step, { [step]: v })); };
</script>
</body></html>`;

/**
 * @param {import('@payflow/temporal/client').StarterContext} ctx
 * @param {{url: string, secret?: string}} events where this backend takes events (set once it listens), and their secret
 * @returns {import('node:http').RequestListener}
 */
function routes(ctx, events) {
  return async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://backend');
      const path = url.pathname;
      if (req.method === 'GET' && path === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end(PAGE);
      }
      if (req.method === 'POST' && path === '/events') {
        if (!events.secret) throw new HttpError(503, 'NOTIFY_SECRET is not set: events cannot be verified');
        const outcome = applyEvent(await readRaw(req), req.headers, events.secret);
        return sendJson(res, 200, { outcome });
      }
      const order = /^\/api\/orders\/([^/]+)$/.exec(path);
      if (req.method === 'GET' && order) {
        const found = orders.get(decodeURIComponent(order[1]));
        if (!found) throw new HttpError(404, 'no such order');
        return sendJson(res, 200, found);
      }
      if (req.method === 'POST' && path === '/api/checkout') {
        const body = await readJson(req);
        const reference = `shop-co-${randomUUID()}`;
        const { checkoutUrl } = await payflow.startCheckout(ctx, {
          transactionRef: reference,
          amount: body.amount,
          currency: 'NGN',
          email: body.email,
        });
        return sendJson(res, 201, { kind: 'checkout', reference, status: 'open', checkoutUrl });
      }
      if (req.method === 'POST' && path === '/api/card') {
        const body = await readJson(req);
        const reference = `shop-card-${randomUUID()}`;
        // The order waits for its payment's event (POST /events), not for a poll.
        orders.set(reference, { reference, status: 'pending', sequence: 0, amount: body.amount, currency: 'NGN' });
        const { state } = await payflow.startCardPaymentForStep(ctx, {
          transactionRef: reference,
          amount: body.amount,
          currency: 'NGN',
          card: body.card,
          customer: { name: body.name, email: body.email },
          ...(events.secret ? { notify: { url: events.url } } : {}),
        });
        return sendJson(res, 201, cardView(state));
      }
      const step = /^\/api\/card\/([^/]+)\/(pin|otp)$/.exec(path);
      if (req.method === 'POST' && step) {
        const body = await readJson(req);
        const reference = decodeURIComponent(step[1]);
        const code = String(body[step[2]] ?? '');
        const state =
          step[2] === 'pin'
            ? await payflow.submitPin(ctx, reference, code)
            : await payflow.submitOtp(ctx, reference, code);
        return sendJson(res, 200, cardView(state));
      }
      const show = /^\/api\/payments\/([^/]+)$/.exec(path);
      if (req.method === 'GET' && show) {
        const reference = decodeURIComponent(show[1]);
        if (reference.startsWith('shop-co-'))
          return sendJson(res, 200, checkoutView(await payflow.getCheckoutState(ctx, reference)));
        if (reference.startsWith('shop-card-'))
          return sendJson(res, 200, cardView(await payflow.getCardPaymentState(ctx, reference)));
        throw new HttpError(404, 'no such payment');
      }
      throw new HttpError(404, 'not found');
    } catch (err) {
      const e = toHttpError(err);
      // The message only: a starter's error never carries card data, and the request body is never logged.
      if (e.status >= 500)
        console.error(`merchant backend: ${err instanceof Error ? err.name : 'error'} on ${req.method} ${req.url}`);
      sendJson(res, e.status, { error: e.message, ...(e.details ? { details: e.details } : {}) });
    }
  };
}

async function main() {
  const ctx = await payflow.connectStarters();
  const events = { url: '', secret: process.env.NOTIFY_SECRET };
  const server = createServer(routes(ctx, events));
  const port = Number(process.env.MERCHANT_BACKEND_PORT ?? 4040);
  const host = process.env.MERCHANT_BACKEND_HOST ?? '127.0.0.1';
  await new Promise((resolve) => server.listen(port, host, () => resolve(undefined)));
  const address = server.address();
  events.url = `http://${host}:${typeof address === 'object' && address ? address.port : port}/events`;
  console.log(
    `merchant backend listening on http://${host}:${typeof address === 'object' && address ? address.port : port}`,
  );
  const stop = () => {
    server.close();
    payflow.closeStarters(ctx).finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
