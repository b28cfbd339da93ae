// CLI: `npm run cli -- notify ...`: events to the merchant's backend (docs/events.md) and the
// merchant-event delivery flow's deliveries.
//   notify listen [--port 4100] [--host 127.0.0.1] [--secret whsec_…] [--json]
//       A local merchant endpoint, like `stripe listen`: verifies each event's signature (Standard
//       Webhooks) and prints it as it arrives; 204 for a verified event, 400 otherwise. Without a
//       secret (--secret or NOTIFY_SECRET) it makes one and prints the two settings to give npm start.
//   notify list [--failed] [--since <time>] [--reference <ref>] [--json]
//   notify redeliver <id>
//   notify replay --since <time>
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { newNotifySecret, verifyEvent, notifySecretIssue, type MerchantEvent } from '../../notify';
import { StarterInputError } from '../../shared/input-error';
import { listMerchantEvents, redeliverMerchantEvent, replayMerchantEvents } from '../merchant-event-delivery';
import { currentIo, type ContextFactory } from './context';
import { printResult, progress, streamJson } from './output';

/** One line per event: what a person watching the listener needs. */
export function renderMerchantEvent(e: MerchantEvent): string {
  const d = e.data;
  const money = d.amount !== undefined ? ` ${d.amount} ${d.currency ?? ''}`.trimEnd() : '';
  return `${e.created_at}  ${e.type}  ${d.flow} ${d.reference}${d.part ? ` (${d.part})` : ''}  ${d.status}${money}  seq ${d.sequence}  id ${e.id}`;
}

export interface Listener {
  url: string;
  secret: string;
  server: Server;
}

/** The listener (also used by tests and the chaos suite): verifies, prints through `print`, answers. */
export async function startListener(
  opts: { port: number; host: string; secret: string },
  print: (line: string, event?: MerchantEvent) => void,
): Promise<Listener> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const event = verifyEvent(opts.secret, Buffer.concat(chunks), req.headers as Record<string, string>);
        print(renderMerchantEvent(event), event);
        res.writeHead(204).end();
      } catch (err) {
        print(`refused: ${(err as Error).message}`);
        res.writeHead(400, { 'content-type': 'text/plain' }).end('refused\n');
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return { url: `http://${opts.host}:${port}/events`, secret: opts.secret, server };
}

function parseSince(v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const rel = /^(\d+)(m|h|d)$/.exec(v);
  const d = rel
    ? new Date(Date.now() - Number(rel[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[rel[2] as 'm' | 'h' | 'd'])
    : new Date(v);
  if (Number.isNaN(d.getTime()))
    throw new StarterInputError('notify', [{ field: 'since', rule: 'must be an ISO time or an age such as 2h or 1d' }]);
  return d;
}

/**
 * Resolves once `stop` is done, on the first SIGINT or SIGTERM. Its handlers are removed then, so a
 * run inside a longer-lived process (runCli) leaves none behind.
 */
function untilInterrupted(stop: (done: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const onSignal = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      stop(resolve);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

export function registerNotifyCommands(program: Command, context: ContextFactory): void {
  const notify = program.command('notify').description("events to the merchant's backend (docs/events.md)");

  notify
    .command('listen')
    .description('a local merchant endpoint: verifies each event and prints it as it arrives')
    .option('--port <port>', 'port to listen on', '4100')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--secret <whsec>', 'the signing secret (default NOTIFY_SECRET, else a new one is made)')
    .option('--json', 'print each verified event as one JSON line')
    .action(async (o: { port: string; host: string; secret?: string; json?: boolean }) => {
      const envSecret = currentIo().env.NOTIFY_SECRET;
      const secret = o.secret ?? envSecret ?? newNotifySecret();
      // NOTIFY_SECRET may list several secrets (a rotation): an event signed under any of them verifies.
      if (notifySecretIssue(secret))
        throw new StarterInputError('notify', [{ field: 'secret', rule: 'must start with whsec_ (base64 after it)' }]);
      const listener = await startListener({ port: Number(o.port), host: o.host, secret }, (line, event) =>
        o.json && event ? streamJson(event) : progress(line),
      );
      progress(`listening on ${listener.url}: each event is verified, then printed`);
      if (!o.secret && !envSecret) progress(`give the worker: NOTIFY_URL=${listener.url} NOTIFY_SECRET=${secret}`);
      else progress(`give the worker: NOTIFY_URL=${listener.url} (and the same NOTIFY_SECRET)`);
      await untilInterrupted((done) => listener.server.close(() => done()));
    });

  notify
    .command('list')
    .description('deliveries of merchant events (newest first), from the search attributes')
    .option('--failed', 'only deliveries that gave up (delivery_failed)')
    .option('--since <time>', 'only those started since (ISO time, or an age: 2h, 1d)')
    .option('--reference <ref>', "only this flow's reference")
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'print as JSON')
    .action(async (o: { failed?: boolean; since?: string; reference?: string; limit: string; json?: boolean }) => {
      const since = parseSince(o.since);
      const rows = await listMerchantEvents(await context(), {
        failed: o.failed,
        ...(since ? { since } : {}),
        ...(o.reference ? { reference: o.reference } : {}),
        limit: Number(o.limit),
      });
      printResult(
        rows,
        rows.length === 0
          ? 'no merchant events'
          : rows.map((r) => `${r.startedAt}  ${r.status ?? '-'}  ${r.reference ?? '-'}  ${r.eventId}`),
      );
    });

  notify
    .command('redeliver <id>')
    .description('deliver an event again under the same id (a delivery still running is left alone)')
    .action(async (id: string) => {
      const r = await redeliverMerchantEvent(await context(), id);
      progress(
        r.outcome === 'started'
          ? `redelivering ${id} (was ${r.previous})`
          : `${id} is still being delivered: nothing to do`,
      );
    });

  notify
    .command('replay')
    .description('deliver again every event since a time (each under its own id)')
    .requiredOption('--since <time>', 'ISO time, or an age: 2h, 1d')
    .action(async (o: { since: string }) => {
      const done = await replayMerchantEvents(await context(), parseSince(o.since)!);
      const started = done.filter((d) => d.outcome === 'started').length;
      progress(`${started} event(s) redelivered, ${done.length - started} still being delivered`);
    });
}
