// Remote codec endpoint for the Temporal Web UI and CLI: POST /encode and /decode with
// `{payloads: [...]}` (proto3 JSON). Needs a bearer token; CORS lets the Web UI call it.
// The bundled dev UI cannot attach a custom header, so the token may also lead the path:
// http://host:port/t/<token>/decode — documented in the README as a local-development aid.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { Logger } from 'pino';

interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

export interface CodecServerOptions {
  codec: PayloadCodec;
  token: string;
  corsOrigins: string[];
  host?: string;
  port?: number;
  logger?: Logger;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
}

export interface RunningCodecServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

function fromJson(p: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: p.data ? Buffer.from(p.data, 'base64') : undefined,
  };
}

function toJson(p: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    data: p.data ? Buffer.from(p.data).toString('base64') : undefined,
  };
}

function tokenMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function createCodecServer(opts: CodecServerOptions): Server {
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;

  const setCors = (req: IncomingMessage, res: ServerResponse) => {
    const origin = req.headers.origin;
    if (origin && opts.corsOrigins.includes(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization, X-Namespace');
      res.setHeader('Access-Control-Allow-Credentials', 'true');
    }
  };

  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  return createServer((req, res) => {
    setCors(req, res);
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://codec');
    let path = url.pathname;
    let token: string | undefined;
    const pathToken = /^\/t\/([^/]+)(\/.*)$/.exec(path);
    if (pathToken) {
      token = decodeURIComponent(pathToken[1]);
      path = pathToken[2];
    }
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ')) token = auth.slice('Bearer '.length);

    if (req.method === 'GET' && path === '/healthz') return reply(res, 200, { ok: true });
    if (req.method !== 'POST' || (path !== '/encode' && path !== '/decode')) return reply(res, 404, { error: 'not found' });
    if (!tokenMatches(opts.token, token)) return reply(res, 401, { error: 'missing or invalid bearer token' });

    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBody) {
        reply(res, 413, { error: 'body too large' });
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      void (async () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payloads?: JsonPayload[] };
          if (!Array.isArray(body.payloads)) return reply(res, 400, { error: 'payloads must be an array' });
          const input = body.payloads.map(fromJson);
          const output = path === '/encode' ? await opts.codec.encode(input) : await opts.codec.decode(input);
          reply(res, 200, { payloads: output.map(toJson) });
        } catch (err) {
          opts.logger?.warn({ err, path }, 'codec request failed');
          reply(res, 400, { error: 'payloads could not be processed' });
        }
      })();
    });
  });
}

export async function startCodecServer(opts: CodecServerOptions): Promise<RunningCodecServer> {
  const server = createCodecServer(opts);
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
