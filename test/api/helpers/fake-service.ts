// A small real HTTP server standing in for the payments service in the client's tests:
// it records each request (method, path, query, headers, parsed body) and answers from a
// table of routes with the bodies the spec documents.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PaymentsClient, type PaymentsClientOptions } from '../../../src/api';

export const TEST_KEY = 'sandbox_sk_test_key_for_client_tests_0001';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  rawBody: string;
  body: unknown;
}

export type Reply =
  | { status: number; body?: unknown; raw?: string; headers?: Record<string, string> }
  | 'hang'
  | 'reset'
  | 'hang-body'
  | ((req: RecordedRequest, res: ServerResponse) => void);

export interface FakeService {
  url: string;
  requests: RecordedRequest[];
  /** Answers the next requests for method + path (pathname only) with `reply`. */
  on(method: string, path: string, reply: Reply): void;
  last(): RecordedRequest;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeService(): Promise<FakeService> {
  const routes = new Map<string, Reply>();
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown = undefined;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        body = rawBody;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams.entries()),
        headers: req.headers,
        rawBody,
        body,
      };
      requests.push(recorded);
      const reply = routes.get(`${req.method} ${url.pathname}`);
      if (reply === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            status: 404,
            success: false,
            message: `fake service: no route ${req.method} ${url.pathname}`,
            data: null,
          }),
        );
        return;
      }
      if (reply === 'hang') return; // never answer
      if (reply === 'reset') {
        req.socket.destroy();
        return;
      }
      if (reply === 'hang-body') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"status":200,');
        return;
      }
      if (typeof reply === 'function') {
        reply(recorded, res);
        return;
      }
      const text = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
      res.writeHead(reply.status, { 'content-type': reply.raw ? 'text/html' : 'application/json', ...reply.headers });
      res.end(text);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on(method, path, reply) {
      routes.set(`${method} ${path}`, reply);
    },
    last() {
      const r = requests[requests.length - 1];
      if (!r) throw new Error('no request was received');
      return r;
    },
    reset() {
      routes.clear();
      requests.length = 0;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function clientFor(service: { url: string }, opts: Partial<PaymentsClientOptions> = {}): PaymentsClient {
  return new PaymentsClient({ baseUrl: service.url, secretKey: TEST_KEY, timeoutMs: 5_000, ...opts });
}

/**
 * One fake service and a client aimed at it for a whole test file: started before the first
 * test, cleared of routes and requests before each, closed after the last.
 */
export function useFakeService(): { readonly svc: FakeService; readonly client: PaymentsClient } {
  const fake = {} as { svc: FakeService; client: PaymentsClient };
  beforeAll(async () => {
    fake.svc = await startFakeService();
    fake.client = clientFor(fake.svc);
  });
  afterAll(async () => {
    await fake.client.close();
    await fake.svc.close();
  });
  beforeEach(() => fake.svc.reset());
  return fake;
}

/** Awaits a promise that must reject and returns the error. */
export async function rejectionOf(p: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** The spec's envelope for a 200. */
export const ok = (data: unknown, message = 'Success') => ({
  status: 200,
  body: { status: 200, success: true, message, data },
});

/** The spec's envelope for a refusal: HTTP `status` with the same status, `success: false` and `message` in the body. */
export const refused = (status: number, message: string) => ({
  status,
  body: { status, success: false, message, data: null },
});
