// The baseline merchant's own webhook receiver: what a hand-written one does with E-1 and nothing
// more. It checks the signature on the raw bytes (HMAC-SHA512 of the body, keyed with the secret
// key) and answers 200; the baseline's workflows confirm by verify and never wait for it. It starts
// no workflow and talks to no Temporal server: the baseline's notifications cost our receiver and
// our task queue nothing (the sandbox sends them here, SANDBOX_WEBHOOK_URLS).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const secretKey = process.env.PAYMENTS_SECRET_KEY!;
let received = 0;
let refused = 0;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/counts') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received, refused }));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const expected = createHmac('sha512', secretKey).update(body).digest();
    const given = Buffer.from(String(req.headers['x-service-encrypted-body'] ?? ''), 'hex');
    const ok = given.length === expected.length && timingSafeEqual(given, expected);
    if (ok) received++;
    else refused++;
    res.writeHead(ok ? 200 : 401).end();
  });
});

server.listen(Number(process.env.BASELINE_RECEIVER_PORT), '127.0.0.1', () =>
  console.log('baseline receiver listening'),
);
