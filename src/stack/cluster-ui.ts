// The Temporal Web UI for the local cluster (docs/cluster.md): the standalone UI server
// (`github.com/temporalio/ui-server`, the same version the Temporal CLI's dev server embeds, built
// from source by scripts/install-temporal-server.mjs) as a process of its own, reaching the
// frontend over mTLS with our client certificate, and decoding payloads through our codec server.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { endChild, type TemporalCluster } from './temporal-cluster';
import { PROJECT_ROOT } from './temporal-binaries';

/** The UI of the pinned Temporal CLI (UI 2.54.1), so both modes show the same UI. */
export const TEMPORAL_UI_SERVER_VERSION = 'v2.54.1';

export function uiServerBinary(version = TEMPORAL_UI_SERVER_VERSION): string {
  return join(PROJECT_ROOT, '.tools', 'temporal-ui-server', version, 'bin', 'temporal-ui-server');
}

export interface ClusterUiOptions {
  /** The port the UI listens on (127.0.0.1): the codec server's CORS origins name it (TEMPORAL_UI_PORT). */
  port: number;
  /** Our codec server's endpoint, path token included, as the dev server's UI gets it. */
  codecEndpoint?: string;
  /** In a process group of its own (`npm start -- --cluster`: Ctrl-C reaches only our process). */
  ownProcessGroup?: boolean;
}

export interface ClusterUi {
  url: string;
  stop(): Promise<void>;
}

/** The UI server's whole configuration (JSON is YAML): what differs from its defaults for our cluster. */
export function clusterUiConfig(cluster: Pick<TemporalCluster, 'address' | 'certs'>, opts: ClusterUiOptions) {
  const origins = [`http://127.0.0.1:${opts.port}`, `http://localhost:${opts.port}`];
  return {
    temporalGrpcAddress: cluster.address,
    host: '127.0.0.1',
    port: opts.port,
    enableUi: true,
    defaultNamespace: 'default',
    refreshInterval: '1m',
    cors: { allowOrigins: origins, cookieInsecure: true },
    tls: {
      caFile: cluster.certs.caCert,
      certFile: cluster.certs.clientCert,
      keyFile: cluster.certs.clientKey,
      serverName: cluster.certs.serverName,
      enableHostVerification: true,
    },
    codec: { endpoint: opts.codecEndpoint ?? '', passAccessToken: false, includeCredentials: false },
    // No calls to temporal.io from an operator's browser.
    disableNewsFetch: true,
  };
}

/** Starts the UI server against `cluster` and waits until it answers HTTP. */
export async function startClusterUi(cluster: TemporalCluster, opts: ClusterUiOptions): Promise<ClusterUi> {
  const binary = uiServerBinary();
  if (!existsSync(binary))
    throw new Error(`the Temporal UI server is not built: run node scripts/install-temporal-server.mjs (${binary})`);
  const root = join(cluster.dir, 'ui');
  mkdirSync(join(root, 'config'), { recursive: true });
  writeFileSync(join(root, 'config', 'cluster.yaml'), JSON.stringify(clusterUiConfig(cluster, opts), null, 2) + '\n', {
    mode: 0o600,
  });
  const out = createWriteStream(join(cluster.dir, 'logs', 'ui.log'), { flags: 'a' });
  const child: ChildProcess = spawn(binary, ['--root', root, '--config', 'config', '--env', 'cluster', 'start'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.ownProcessGroup ?? false,
  });
  child.stdout!.pipe(out, { end: false });
  child.stderr!.pipe(out, { end: false });
  const url = `http://127.0.0.1:${opts.port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) await endChild(child, 'SIGTERM', 5_000);
    out.end();
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(
        `the Temporal UI server exited (${child.exitCode}) before it answered; see ${cluster.dir}/logs/ui.log`,
      );
    }
    const answered = await fetch(`${url}/api/v1/settings`).then(
      (r) => r.ok,
      () => false,
    );
    if (answered) return { url, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the Temporal UI server did not answer within 30 s; see ${cluster.dir}/logs/ui.log`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
