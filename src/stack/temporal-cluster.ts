// A real multi-service Temporal cluster on this machine (docs/cluster.md): the server built from
// source by scripts/install-temporal-server.mjs, on an embedded PostgreSQL (persistence and SQL
// visibility), with frontend, two history processes, matching and worker each a process of its own,
// mTLS on the frontend (certificates from src/stack/cluster-certs.ts) and an envconfig profile our
// processes connect through unchanged (TEMPORAL_CONFIG_FILE + TEMPORAL_PROFILE).
//
// Everything lives in one directory: cluster.json (ports, shard count, database password: kept so a
// restart finds the same cluster; the shard count can never change once the schema holds data),
// certs/, config/, pg/, logs/ and temporal.toml (the profile).
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync, type WriteStream } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
// eslint-disable-next-line no-restricted-imports -- registerNamespace takes a protobuf Duration (a Long); no public entry exports the SDK's converter
import { msToTs } from '@temporalio/common/lib/time';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../claim-check/embedded';
import { ensureSearchAttributes } from '../workers/search-attribute-setup';
import { ensureClusterCerts, type ClusterCerts } from './cluster-certs';
import { freePort } from '../http/free-port';
import { PROJECT_ROOT } from './temporal-binaries';

const execFileAsync = promisify(execFile);

export const TEMPORAL_SERVER_VERSION = 'v1.32.2';
/** The envconfig profile name the cluster writes into its temporal.toml. */
export const CLUSTER_PROFILE = 'cluster';
/** Fixed at schema setup; 8 spreads workflows over both history processes with room to rebalance. */
export const CLUSTER_HISTORY_SHARDS = 8;
export const CLUSTER_NAMESPACES = ['default', 'merchant'] as const;
/** The processes of the cluster, each `temporal-server start --service <role>`. */
export const CLUSTER_PROCESSES = ['history-1', 'history-2', 'matching', 'frontend', 'worker'] as const;
export type ClusterProcessName = (typeof CLUSTER_PROCESSES)[number];
const ROLE: Record<ClusterProcessName, string> = {
  'history-1': 'history',
  'history-2': 'history',
  matching: 'matching',
  frontend: 'frontend',
  worker: 'worker',
};

interface ClusterState {
  version: string;
  numHistoryShards: number;
  pgPort: number;
  pgPassword: string;
  schemaReady: boolean;
  ports: Record<ClusterProcessName, { grpc: number; membership: number }> & { frontendHttp: number };
}

export interface ClusterOptions {
  /** State directory (made if missing). */
  dir: string;
  /** The frontend's gRPC port on a new cluster; 0 or unset: a free port. Other ports are always free ones. */
  frontendPort?: number;
  log?: (line: string) => void;
  /** Server log level (default warn). */
  logLevel?: string;
  /**
   * Server processes and PostgreSQL in process groups of their own (`npm start -- --cluster`): a
   * terminal's Ctrl-C then reaches only our process, which stops the worker before the cluster.
   */
  ownProcessGroup?: boolean;
}

export function serverBinaries(version = TEMPORAL_SERVER_VERSION): { server: string; sqlTool: string } {
  const bin = join(PROJECT_ROOT, '.tools', 'temporal-server', version, 'bin');
  return { server: join(bin, 'temporal-server'), sqlTool: join(bin, 'temporal-sql-tool') };
}

/** One server process: started, SIGKILLed and started again on the same ports (the chaos does). */
export class ClusterProcess {
  child?: ChildProcess;
  starts = 0;
  constructor(
    readonly name: ClusterProcessName,
    private readonly binary: string,
    private readonly configFile: string,
    private readonly grpcPort: number,
    private readonly out: WriteStream,
    private readonly detached = false,
  ) {}

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Spawns it and waits until its gRPC port accepts connections. */
  async start(timeoutMs = 120_000): Promise<void> {
    this.starts++;
    const args = ['--config-file', this.configFile, '--allow-no-auth', 'start', '--service', ROLE[this.name]];
    const child = spawn(this.binary, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: this.detached });
    this.child = child;
    this.out.write(`\n==== ${this.name} start #${this.starts} pid ${child.pid} at ${new Date().toISOString()} ====\n`);
    child.stdout!.pipe(this.out, { end: false });
    child.stderr!.pipe(this.out, { end: false });
    child.once('exit', (code, signal) => this.out.write(`\n==== ${this.name} exit ${code ?? signal} ====\n`));
    const deadline = Date.now() + timeoutMs;
    while (!(await portOpen(this.grpcPort))) {
      if (!this.running) throw new Error(`temporal ${this.name} exited before it listened; see its log`);
      if (Date.now() > deadline) throw new Error(`temporal ${this.name} did not listen within ${timeoutMs} ms`);
      await sleep(200);
    }
  }

  /** Ends it with `signal` (SIGKILL: no goodbye to the ring, shards and task queues are taken over by timeout). */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child && this.running) await endChild(this.child, signal, 20_000);
  }
}

/** Sends `signal` and waits for the exit; a softer signal not obeyed within `forceAfterMs` becomes SIGKILL. */
export function endChild(child: ChildProcess, signal: NodeJS.Signals, forceAfterMs: number): Promise<void> {
  return new Promise<void>((done) => {
    const force = signal === 'SIGKILL' ? undefined : setTimeout(() => child.kill('SIGKILL'), forceAfterMs).unref();
    child.once('exit', () => {
      clearTimeout(force);
      done();
    });
    child.kill(signal);
  });
}

export interface TemporalCluster {
  dir: string;
  /** host:port of the frontend (mTLS). */
  address: string;
  certs: ClusterCerts;
  /** The envconfig TOML file with [profile.cluster]. */
  profileFile: string;
  /** What a process of ours needs to reach the cluster (and nothing else about Temporal). */
  env: { TEMPORAL_CONFIG_FILE: string; TEMPORAL_PROFILE: string };
  processes: Record<ClusterProcessName, ClusterProcess>;
  postgres: EmbeddedPostgres;
  /** An admin connection (mTLS, our client certificate); closed by stop(). */
  connect(): Promise<Connection>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function portOpen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = tcpConnect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
    socket.setTimeout(1_000, () => {
      socket.destroy();
      done(false);
    });
  });
}

/**
 * A free port below 32768: the server stores membership ports in a PostgreSQL smallint, and the
 * kernel's ephemeral ports (what port 0 gives) lie above it.
 */
async function loadOrCreateState(dir: string, frontendPort: number | undefined): Promise<ClusterState> {
  const file = join(dir, 'cluster.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
  const pair = async () => ({ grpc: await freePort(), membership: await freePort() });
  const ports = {
    'history-1': await pair(),
    'history-2': await pair(),
    matching: await pair(),
    frontend: { grpc: frontendPort || (await freePort()), membership: await freePort() },
    worker: await pair(),
    frontendHttp: await freePort(),
  };
  const state: ClusterState = {
    version: TEMPORAL_SERVER_VERSION,
    numHistoryShards: CLUSTER_HISTORY_SHARDS,
    pgPort: await freePort(),
    pgPassword: randomBytes(18).toString('base64url'),
    schemaReady: false,
    ports,
  };
  saveState(dir, state);
  return state;
}

function saveState(dir: string, state: ClusterState): void {
  writeFileSync(join(dir, 'cluster.json'), JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
}

/** The server's YAML config for one process (JSON is YAML): only its own service's ports differ. */
function serverConfig(
  name: ClusterProcessName,
  state: ClusterState,
  certs: ClusterCerts,
  dynamicConfigFile: string,
  logLevel: string,
): string {
  const sql = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `127.0.0.1:${state.pgPort}`,
      connectProtocol: 'tcp',
      user: 'postgres',
      password: state.pgPassword,
      // 5 processes × (12 + 4) stays under PostgreSQL's default 100 connections.
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (p: { grpc: number; membership: number }, http?: number) => ({
    rpc: { grpcPort: p.grpc, membershipPort: p.membership, bindOnLocalHost: true, ...(http ? { httpPort: http } : {}) },
  });
  const frontendAddress = `${certs.serverName}:${state.ports.frontend.grpc}`;
  const toFrontend = { serverName: certs.serverName, rootCaFiles: [certs.caCert] };
  const config = {
    log: { stdout: true, level: logLevel },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: state.numHistoryShards,
      datastores: { default: sql('temporal', 12), visibility: sql('temporal_visibility', 4) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      tls: {
        frontend: {
          server: {
            certFile: certs.serverCert,
            keyFile: certs.serverKey,
            clientCaFiles: [certs.caCert],
            requireClientAuth: true,
          },
          client: toFrontend,
        },
        systemWorker: { certFile: certs.systemWorkerCert, keyFile: certs.systemWorkerKey, client: toFrontend },
      },
    },
    // Every role is listed (the membership monitor tracks the roles it finds here), though only this
    // process's is started from this file: history-2's file carries history-2's ports for `history`.
    services: {
      frontend: rpc(state.ports.frontend, state.ports.frontendHttp),
      history: rpc(state.ports[name === 'history-2' ? 'history-2' : 'history-1']),
      matching: rpc(state.ports.matching),
      worker: rpc(state.ports.worker),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: frontendAddress },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    publicClient: { hostPort: frontendAddress },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '10s' },
  };
  return JSON.stringify(config, null, 2) + '\n';
}

/** The dynamic-config switches both the cluster and the dev server (src/stack/temporal-dev-server.ts) turn on: Updates and Worker Versioning. */
export const SERVER_SWITCHES = [
  'frontend.enableUpdateWorkflowExecution',
  'frontend.enableUpdateWorkflowExecutionAsyncAccepted',
  'frontend.workerVersioningWorkflowAPIs',
];

/** create-database, setup-schema 0.0, update-schema to the embedded latest: persistence, then SQL visibility. */
async function setupSchema(sqlTool: string, state: ClusterState, log: (l: string) => void): Promise<void> {
  // The password goes through the environment (SQL_PASSWORD), never the command line.
  const env = { ...process.env, SQL_PASSWORD: state.pgPassword };
  const base = ['--plugin', 'postgres12', '--ep', '127.0.0.1', '-p', String(state.pgPort), '-u', 'postgres'];
  for (const [db, schema] of [
    ['temporal', 'postgresql/v12/temporal'],
    ['temporal_visibility', 'postgresql/v12/visibility'],
  ]) {
    log(`schema: ${db} (${schema})`);
    for (const args of [
      ['--db', db, 'create-database'],
      ['--db', db, 'setup-schema', '-v', '0.0'],
      ['--db', db, 'update-schema', '--schema-name', schema],
    ]) {
      await execFileAsync(sqlTool, [...base, ...args], { env }).catch((err: Error & { stderr?: string }) => {
        throw new Error(`temporal-sql-tool ${args.slice(2).join(' ')} on ${db} failed: ${err.stderr ?? err.message}`);
      });
    }
  }
}

function writeProfile(file: string, address: string, certs: ClusterCerts): void {
  const q = (s: string) => JSON.stringify(s);
  writeFileSync(
    file,
    [
      `# Written by the local cluster (src/stack/temporal-cluster.ts): TEMPORAL_CONFIG_FILE=${file} TEMPORAL_PROFILE=${CLUSTER_PROFILE}`,
      `[profile.${CLUSTER_PROFILE}]`,
      `address = ${q(address)}`,
      `namespace = "default"`,
      '',
      `[profile.${CLUSTER_PROFILE}.tls]`,
      `server_ca_cert_path = ${q(certs.caCert)}`,
      `client_cert_path = ${q(certs.clientCert)}`,
      `client_key_path = ${q(certs.clientKey)}`,
      `server_name = ${q(certs.serverName)}`,
      '',
    ].join('\n'),
  );
}

/** Calls `fn` until it answers or 90 s pass: a just-started frontend refuses calls until it has joined the ring. */
async function untilAnswered<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(1_000);
    }
  }
}

/** Registers both namespaces and our search attributes on each; true when an attribute was added. */
async function setupNamespaces(connection: Connection, log: (l: string) => void): Promise<boolean> {
  let addedAny = false;
  for (const namespace of CLUSTER_NAMESPACES) {
    const registered = await untilAnswered(() =>
      connection.workflowService
        .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('3 days') })
        .then(
          () => true,
          (err: { code?: number }) => {
            // 6 = ALREADY_EXISTS: a restart of an existing cluster.
            if (err.code === 6) return false;
            throw err;
          },
        ),
    );
    if (registered) log(`namespace ${namespace} registered`);
    // The frontend's namespace cache learns a new namespace within its refresh interval.
    const result = await untilAnswered(() => ensureSearchAttributes(connection, namespace));
    if (result.added.length > 0) {
      addedAny = true;
      log(`namespace ${namespace}: search attributes ${result.added.join(', ')} registered`);
    }
  }
  return addedAny;
}

export async function startTemporalCluster(opts: ClusterOptions): Promise<TemporalCluster> {
  const log = opts.log ?? (() => undefined);
  const { server, sqlTool } = serverBinaries();
  if (!existsSync(server) || !existsSync(sqlTool))
    throw new Error(`the Temporal server is not built: run node scripts/install-temporal-server.mjs (${server})`);
  const dir = resolve(opts.dir);
  mkdirSync(join(dir, 'logs'), { recursive: true });
  mkdirSync(join(dir, 'config'), { recursive: true });
  const state = await loadOrCreateState(dir, opts.frontendPort);
  const certs = ensureClusterCerts(join(dir, 'certs'));
  const postgres = await startEmbeddedPostgres({
    dataDir: join(dir, 'pg'),
    port: state.pgPort,
    password: state.pgPassword,
    database: 'postgres',
    ownProcessGroup: opts.ownProcessGroup ?? false,
  });
  const processes = {} as Record<ClusterProcessName, ClusterProcess>;
  const outs: WriteStream[] = [];
  const stop = async () => {
    for (const name of [...CLUSTER_PROCESSES].reverse()) await processes[name]?.kill('SIGTERM');
    await postgres.stop();
    for (const o of outs) o.end();
  };
  try {
    if (!state.schemaReady) {
      await setupSchema(sqlTool, state, log);
      state.schemaReady = true;
      saveState(dir, state);
    }
    Object.assign(processes, clusterProcesses(dir, server, state, certs, opts, outs));
    await startInOrder(processes);
    const address = `127.0.0.1:${state.ports.frontend.grpc}`;
    const profileFile = join(dir, 'temporal.toml');
    writeProfile(profileFile, address, certs);
    const connect = () =>
      Connection.connect({
        address,
        tls: {
          serverNameOverride: certs.serverName,
          serverRootCACertificate: readFileSync(certs.caCert),
          clientCertPair: { crt: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) },
        },
        connectTimeout: 10_000,
      });
    await prepareNamespaces(await connect(), log);
    log(`cluster up: frontend ${address} (mTLS), ${state.numHistoryShards} history shards`);
    return {
      dir,
      address,
      certs,
      profileFile,
      env: { TEMPORAL_CONFIG_FILE: profileFile, TEMPORAL_PROFILE: CLUSTER_PROFILE },
      processes,
      postgres,
      connect,
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

/** Each server process with its config file and log; none started yet. */
function clusterProcesses(
  dir: string,
  server: string,
  state: Awaited<ReturnType<typeof loadOrCreateState>>,
  certs: ReturnType<typeof ensureClusterCerts>,
  opts: ClusterOptions,
  outs: WriteStream[],
): Record<ClusterProcessName, ClusterProcess> {
  const dynamicConfigFile = join(dir, 'config', 'dynamicconfig.yaml');
  const dynamicConfig = Object.fromEntries(SERVER_SWITCHES.map((s) => [s, [{ value: true }]]));
  writeFileSync(dynamicConfigFile, JSON.stringify(dynamicConfig, null, 2) + '\n');
  const processes = {} as Record<ClusterProcessName, ClusterProcess>;
  for (const name of CLUSTER_PROCESSES) {
    const configFile = join(dir, 'config', `${name}.yaml`);
    writeFileSync(configFile, serverConfig(name, state, certs, dynamicConfigFile, opts.logLevel ?? 'warn'), {
      mode: 0o600,
    });
    const out = createWriteStream(join(dir, 'logs', `${name}.log`), { flags: 'a' });
    outs.push(out);
    processes[name] = new ClusterProcess(name, server, configFile, state.ports[name].grpc, out, opts.ownProcessGroup);
  }
  return processes;
}

/**
 * One process first: it writes the cluster metadata record on a new database, and two at once race
 * for it (one fails on the duplicate key). History and matching before the frontend.
 */
async function startInOrder(processes: Record<ClusterProcessName, ClusterProcess>): Promise<void> {
  await processes['history-1'].start();
  await Promise.all(['history-2', 'matching'].map((n) => processes[n as ClusterProcessName].start()));
  await processes.frontend.start();
  await processes.worker.start();
}

/** The namespaces and search attributes, on an admin connection closed afterwards. */
async function prepareNamespaces(admin: Connection, log: (line: string) => void): Promise<void> {
  try {
    const added = await setupNamespaces(admin, log);
    // History and matching read search-attribute definitions into a cache refreshed every 60 s:
    // a flow upserting a just-registered attribute before then would be refused.
    if (added) {
      log('waiting 61 s for the services to learn the new search attributes');
      await sleep(61_000);
    }
  } finally {
    await admin.close();
  }
}
