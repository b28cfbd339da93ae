// No request, however malformed, stops a server we ship. fast-check drives every route of the
// webhook receiver, the codec server and the sandbox (admin API included) over raw sockets with
// random methods, targets (`//`, `%ZZ`, `..`, unicode, very long), headers (odd names, huge,
// duplicate, lying Content-Length) and bodies (random bytes, deep JSON, oversized). The servers
// run in a child process that is watched for an exit. Asserted for every request: an HTTP
// answer that is not 5xx (none is documented for these inputs: the receiver's 503 needs a
// signed webhook and an unreachable Temporal, the sandbox's needs an injected fault), every
// server still answers /healthz afterwards, and nothing was started or signalled in Temporal.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import fc from 'fast-check';
import { Client, Connection } from '@temporalio/client';
import { devServerAddress } from '../support/stack';
import { SANDBOX_ADMIN_HEADERS } from '../support/sandbox-admin';

const FIXTURE = join(__dirname, 'fixtures', 'servers.ts');
const taskQueue = `fuzz-${randomUUID()}`;
let child: ChildProcess;
let urls: { sandbox: string; codec: string; receiver: string };
let exited: number | null | undefined;

beforeAll(async () => {
  child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    env: { ...process.env, TEMPORAL_ADDRESS: devServerAddress(), TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.once('exit', (code) => (exited = code));
  urls = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`servers exited (${code})`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line) as typeof urls));
  });
}, 60_000);
afterAll(() => child?.kill('SIGTERM'));

/** Sends raw bytes and answers the status code of the reply, or 'closed' when the server closed without one. */
function rawRequest(base: string, bytes: Buffer): Promise<number | 'closed'> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let head = '';
    const done = (v: number | 'closed') => {
      socket.destroy();
      resolve(v);
    };
    socket.setTimeout(5_000, () => done('closed'));
    socket.on('error', () => done('closed'));
    socket.on('data', (c: Buffer) => {
      head += c.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (m) done(Number(m[1]));
    });
    socket.on('end', () => done('closed'));
    socket.end(bytes);
  });
}

const ROUTES = {
  receiver: ['/webhooks', '/webhooks/', '/payments/return?reference=x', '/healthz'],
  codec: ['/decode', '/encode', '/t/dev-codec-token/decode', '/t/%ZZ/decode', '/healthz'],
  sandbox: [
    '/transaction/initiate',
    '/transaction/initiate/process-payment',
    '/transaction/payment/authorize',
    '/transaction/verify/x',
    '/virtual-account',
    '/merchant/transactions',
    '/__admin/ledger',
    '/__admin/faults',
    '/__admin/reset',
    '/__admin/clock/advance',
    '/pos/transaction',
    '/sms/send/instant',
  ],
} as const;

const method = fc.oneof(
  fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE'),
  fc.stringMatching(/^[A-Z]{1,12}$/),
  fc.string({ maxLength: 10 }),
);
const nasty = fc.constantFrom(
  '//',
  '/%ZZ',
  '/..',
  '/../../etc/passwd',
  '/%00',
  '/\u00e9\u2603',
  '/a'.repeat(3000),
  '*',
  'http://evil/x',
  '/?%ZZ=%ZZ',
  '/t/%/decode',
  '/webhooks?%',
);
const target = (routes: readonly string[]) =>
  fc.oneof(
    fc.constantFrom(...routes),
    nasty,
    fc.tuple(fc.constantFrom(...routes), fc.oneof(nasty, fc.string({ maxLength: 40 }))).map(([a, b]) => a + b),
    fc.string({ maxLength: 200 }).map((s) => `/${s}`),
  );
const headerName = fc.oneof(
  fc.constantFrom(
    'content-type',
    'authorization',
    'x-service-encrypted-body',
    'x-service-signature',
    'origin',
    'x-namespace',
    'transfer-encoding',
  ),
  fc.stringMatching(/^[a-z-]{1,20}$/),
);
const headerValue = fc.oneof(
  fc.constantFrom(
    'application/json',
    'text/plain',
    'Bearer dev-codec-token',
    SANDBOX_ADMIN_HEADERS.authorization,
    'application/x-www-form-urlencoded',
    'Bearer ',
    'chunked',
    'x'.repeat(20_000),
  ),
  fc.string({ maxLength: 60 }),
);
const body = fc.oneof(
  fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
  fc.json().map((j) => Buffer.from(j)),
  fc.constant(Buffer.from('['.repeat(5000))),
  fc.constant(Buffer.from(JSON.stringify({ payloads: [{ metadata: { encoding: 'x' }, data: '%%%' }] }))),
);
const contentLength = fc.oneof(
  fc.constant('exact'),
  fc.constant('none'),
  fc.constantFrom('-1', 'abc', '99999999999', '0'),
);

function requestBytes(m: string, t: string, headers: [string, string][], b: Buffer, cl: string): Buffer {
  const lines = [`${m} ${t} HTTP/1.1`, 'Host: 127.0.0.1', ...headers.map(([k, v]) => `${k}: ${v}`)];
  if (cl === 'exact') lines.push(`Content-Length: ${b.length}`);
  else if (cl !== 'none') lines.push(`Content-Length: ${cl}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), b]);
}

async function healthy(base: string): Promise<boolean> {
  const path = base === urls.sandbox ? '/__admin/clock' : '/healthz';
  const res = await fetch(`${base}${path}`, { headers: SANDBOX_ADMIN_HEADERS }).catch(() => undefined);
  return res?.status === 200;
}

describe.each(['receiver', 'codec', 'sandbox'] as const)('%s', (server) => {
  it('answers random methods, targets, headers and bodies without a 5xx and stays up', async () => {
    const base = urls[server];
    await fc.assert(
      fc.asyncProperty(
        method,
        target(ROUTES[server]),
        fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }),
        body,
        contentLength,
        async (m, t, h, b, cl) => {
          const status = await rawRequest(base, requestBytes(m, t, h, b, cl));
          if (typeof status === 'number') expect(status).toBeLessThan(500);
          expect(exited).toBeUndefined();
        },
      ),
      { numRuns: 400 },
    );
    expect(await healthy(base)).toBe(true);
    expect(exited).toBeUndefined();
  }, 120_000);
});

describe('the requests that crashed a server before', () => {
  it.each([
    ['receiver', 'GET //'],
    ['codec', 'GET //'],
    ['sandbox', 'GET //'],
    ['codec', 'POST /t/%ZZ/decode'],
    ['receiver', 'POST /webhooks/%ZZ'],
    ['sandbox', 'GET /%ZZ'],
  ] as const)('%s: %s is a 4xx and the server stays up', async (server, line) => {
    const [m, t] = line.split(' ');
    const status = await rawRequest(urls[server], requestBytes(m, t, [], Buffer.alloc(0), 'exact'));
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    expect(await healthy(urls[server])).toBe(true);
    expect(exited).toBeUndefined();
  });

  it('a body over the limit is refused with 413 while it is read (Content-Length first)', async () => {
    const status = await rawRequest(
      urls.receiver,
      Buffer.from(
        `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\nx-service-encrypted-body: ab\r\n\r\n{`,
        'latin1',
      ),
    );
    expect(status).toBe(413);
    expect(await healthy(urls.receiver)).toBe(true);
  });
});

it('nothing was started or signalled in Temporal by any of these unsigned or malformed requests', async () => {
  const connection = await Connection.connect({ address: devServerAddress() });
  try {
    const client = new Client({ connection });
    let count = 0;
    for await (const wf of client.workflow.list({ query: `TaskQueue = "${taskQueue}"` })) if (wf) count += 1;
    expect(count).toBe(0);
  } finally {
    await connection.close();
  }
});
