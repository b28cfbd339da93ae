// `npm run cluster`: the local multi-service Temporal cluster (src/stack/temporal-cluster.ts,
// docs/cluster.md) in the foreground until Ctrl-C. Prints the envconfig profile our processes,
// the CLI and the chaos suite connect through.
//   npm run cluster                      # state in .data/cluster, frontend on 127.0.0.1:7233, Web UI on 8233
//   npm run cluster -- --dir /tmp/c --port 0 --no-ui
import { resolve } from 'node:path';
import { Command } from 'commander';
import { CLUSTER_HISTORY_SHARDS, CLUSTER_NAMESPACES, startTemporalCluster } from './temporal-cluster';
import { startClusterUi, type ClusterUi } from './cluster-ui';

const opts = new Command('cluster')
  .description('Start a local multi-service Temporal cluster (PostgreSQL, mTLS) built from source')
  .option('--dir <dir>', 'state directory (certificates, PostgreSQL, configs, logs)', '.data/cluster')
  .option('--port <n>', 'frontend gRPC port of a new cluster (0: a free one)', (v) => Number.parseInt(v, 10), 7233)
  .option('--log-level <level>', 'server log level', 'warn')
  .option('--ui-port <n>', 'Web UI port (the standalone UI server)', (v) => Number.parseInt(v, 10), 8233)
  .option('--no-ui', 'no Web UI')
  .parse(process.argv)
  .opts<{ dir: string; port: number; logLevel: string; uiPort: number; ui: boolean }>();

async function main(): Promise<void> {
  const say = (line: string) => console.log(`[cluster] ${line}`);
  const cluster = await startTemporalCluster({
    dir: resolve(opts.dir),
    frontendPort: opts.port,
    logLevel: opts.logLevel,
    log: say,
  });
  let ui: ClusterUi | undefined;
  try {
    // Without our codec server (npm start -- --cluster runs one): payloads show encoded.
    if (opts.ui) ui = await startClusterUi(cluster, { port: opts.uiPort });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  const pids = Object.entries(cluster.processes)
    .map(([name, p]) => `${name} ${p.pid}`)
    .join(', ');
  console.log(
    [
      '',
      'Temporal cluster is up:',
      `  frontend          ${cluster.address} (mTLS, CA ${cluster.certs.caCert})`,
      `  processes         ${pids}`,
      `  history shards    ${CLUSTER_HISTORY_SHARDS}; namespaces ${CLUSTER_NAMESPACES.join(', ')}`,
      `  PostgreSQL        ${cluster.postgres.url.replace(/:[^:@/]*@/, ':***@')} (persistence, SQL visibility)`,
      `  Web UI            ${ui ? `${ui.url} (payloads encoded: npm start -- --cluster adds the codec server)` : 'off (--no-ui)'}`,
      `  logs              ${cluster.dir}/logs`,
      '',
      'Connect our processes and the CLI through its profile:',
      `  export TEMPORAL_CONFIG_FILE=${cluster.env.TEMPORAL_CONFIG_FILE} TEMPORAL_PROFILE=${cluster.env.TEMPORAL_PROFILE}`,
      '  (and leave TEMPORAL_ADDRESS unset, or equal to the address above)',
      '',
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping the cluster`);
    await ui?.stop();
    await cluster.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  for (const [name, p] of Object.entries(cluster.processes)) {
    p.child?.once('exit', (code, signal) => {
      if (!stopping) say(`${name} exited on its own (${code ?? signal}); see ${cluster.dir}/logs/${name}.log`);
    });
  }
}

main().catch((err: unknown) => {
  console.error(`[cluster] ${(err as Error).message}`);
  process.exit(1);
});
