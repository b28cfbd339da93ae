// Remote codec endpoint for the Temporal Web UI and CLI: POST /encode and /decode with
// `{payloads: [...]}` (proto3 JSON). Needs a bearer token; CORS lets the Web UI call it.
// The bundled dev UI of `npm start` cannot attach a custom header, so that stack alone gives the
// server a `pathToken`, a capability of its own (never CODEC_SERVER_TOKEN) that may lead the path:
// http://host:port/t/<pathToken>/decode (docs/architecture.md, "Encryption and the Web UI"). Without
// one, and always in production, a token in the path is refused: a URL ends up in the UI's public
// settings, browser history and proxy logs.
// GET /healthz (alive) and GET /readyz (the codec encrypts and decrypts a probe) need no token.
// Requests are counted by route and status; the route label never carries the path's token.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createSafeServer, HttpError, readBodyLimited, requireJsonContentType } from '../http/safe-server';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { Logger } from 'pino';
import { httpMetricsObserver } from '../observability/metrics';
import { answerHealth } from '../observability/health';

interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** The bearer token (Authorization header). */
  token: string;
  /** The one token accepted in the URL path (/t/<token>/...): the development stack's UI only. Refused in production. */
  pathToken?: string;
  /** Production mode: a token in the path is refused, and `pathToken` may not be set. */
  production?: boolean;
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
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: p.data ? Buffer.from(p.data).toString('base64') : undefined,
  };
}

function tokenMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The route label of a request path: the /t/<token> prefix is dropped, so no token reaches a label. */
export function codecRoute(path: string): string {
  const route = path.replace(/^\/t\/[^/]*/, '');
  return ['/encode', '/decode', '/healthz', '/readyz'].includes(route) ? route : 'other';
}

/** Ready when the codec round-trips a probe payload (its keys load and work). */
async function codecWorks(codec: PayloadCodec): Promise<boolean> {
  try {
    const probe = Buffer.from('readiness-probe');
    const [decoded] = await codec.decode(await codec.encode([{ metadata: {}, data: probe }]));
    return Buffer.from(decoded.data ?? []).equals(probe);
  } catch {
    return false;
  }
}

export function createCodecServer(opts: CodecServerOptions): Server {
  if (opts.production && opts.pathToken !== undefined)
    throw new Error('a codec token in the URL path is refused in production: use Authorization: Bearer');
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const health = {
    live: () => true,
    ready: async () => {
      const codec = await codecWorks(opts.codec);
      return { ready: codec, checks: { codec } };
    },
  };

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

  // createSafeServer: a malformed target is a 400 before this runs, and nothing thrown here ends the process.
  return createSafeServer(
    async (req, res, url) => {
      setCors(req, res);
      if (req.method === 'OPTIONS') {
        res.writeHead(204);
        res.end();
        return;
      }
      let path = url.pathname;
      let token: string | undefined;
      const pathToken = /^\/t\/([^/]+)(\/.*)$/.exec(path);
      if (pathToken) {
        path = pathToken[2];
        if (opts.pathToken === undefined) {
          // Refused whatever it holds (even the right token): header authentication only.
          if (path === '/encode' || path === '/decode')
            return reply(res, 401, { error: 'a token in the URL path is refused: send Authorization: Bearer <token>' });
        } else {
          let given: string;
          try {
            given = decodeURIComponent(pathToken[1]);
          } catch {
            return reply(res, 400, { error: 'malformed token in path' });
          }
          if (!tokenMatches(opts.pathToken, given)) return reply(res, 401, { error: 'invalid token in path' });
          token = opts.token; // the path capability stands for the bearer token
        }
      }
      // Header authentication: the bearer token (a proxy's, or the Web UI's access-token forwarding).
      const auth = req.headers.authorization;
      if (typeof auth === 'string' && /^Bearer /i.test(auth)) token = auth.slice('Bearer '.length).trim();

      if ((path === '/healthz' || path === '/readyz') && (await answerHealth(req.method, path, health, res))) return;
      if (path !== '/encode' && path !== '/decode') return reply(res, 404, { error: 'not found' });
      if (req.method !== 'POST') return reply(res, 405, { error: 'method not allowed' });
      if (!tokenMatches(opts.token, token)) return reply(res, 401, { error: 'missing or invalid bearer token' });
      requireJsonContentType(req);

      const raw = await readBodyLimited(req, maxBody);
      let body: { payloads?: JsonPayload[] };
      try {
        body = JSON.parse(raw.toString('utf8')) as { payloads?: JsonPayload[] };
      } catch {
        throw new HttpError(400, 'body is not JSON');
      }
      if (!body || !Array.isArray(body.payloads)) return reply(res, 400, { error: 'payloads must be an array' });
      let input: Payload[];
      try {
        input = body.payloads.map(fromJson);
      } catch {
        return reply(res, 400, { error: 'payloads must be {metadata, data} with base64 values' });
      }
      if (path === '/decode') {
        // Audit: who (a token id, never the token), which namespace/workflow, how many payloads.
        opts.logger?.info(
          {
            audit: 'codec.decode',
            tokenId: tokenId(token!),
            namespace: headerValue(req, 'x-namespace'),
            workflowId: headerValue(req, 'x-workflow-id'),
            payloads: input.length,
          },
          'codec decode',
        );
      }
      try {
        const output = path === '/encode' ? await opts.codec.encode(input) : await opts.codec.decode(input);
        reply(res, 200, { payloads: output.map(toJson) });
      } catch (err) {
        opts.logger?.warn({ err, path }, 'codec request failed');
        reply(res, 400, { error: 'payloads could not be processed' });
      }
    },
    { observe: httpMetricsObserver('codec', codecRoute), span: { server: 'codec', routeOf: codecRoute } },
  );
}

/** A short, stable, non-secret id of a token for audit lines. */
const tokenId = (token: string): string => createHash('sha256').update(token).digest('hex').slice(0, 12);

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' && v.length <= 200 ? v : undefined;
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
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
