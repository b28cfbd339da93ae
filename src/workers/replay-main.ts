// `npm run replay`: replays histories of every workflow type against the current code, before a deploy.
//
//   npm run replay                               the recorded fixtures (test/replay, test/pos, test/vending histories)
//   npm run replay -- --namespace                recent executions of every workflow type from the configured
//                                                namespace (TEMPORAL_* variables or a TEMPORAL_CONFIG_FILE profile;
//                                                PAYLOAD_ENCRYPTION_KEYS of that deployment to read the payloads)
//   npm run replay -- --namespace --per-type 50 --since 14d --type cardPaymentWorkflow --save test/replay/downloaded
//
// Exit code 0: every history replayed; 1: at least one did not (non-determinism: patch the change, see
// docs/operations.md); 2: the replay itself could not run.
import { Command } from 'commander';
import 'dotenv/config';
import { loadConfig } from '../config/config';
import { createTemporalClient } from '../temporal/client';
import { createLogger } from '../logging/logger';
import { installTemporalRuntime } from '../logging/temporal-logger';
import {
  bundleCurrentWorkflows,
  downloadHistories,
  exportedWorkflowTypes,
  FIXTURE_DIRS,
  loadFixtures,
  replayAll,
  runCommand,
  summarise,
} from './replay';

function parseSince(text: string): Date {
  const m = /^(\d+)([hd])$/.exec(text);
  if (!m) throw new Error('--since must look like 36h or 7d');
  return new Date(Date.now() - Number(m[1]) * (m[2] === 'h' ? 3_600_000 : 86_400_000));
}

async function main(): Promise<number> {
  const program = new Command()
    .name('npm run replay --')
    .description('Replay workflow histories against the current workflow code')
    .option(
      '--namespace',
      'download recent histories from the configured Temporal namespace instead of the recorded fixtures',
    )
    .option('--per-type <n>', 'executions per workflow type (namespace mode)', '20')
    .option('--since <age>', 'only executions started within this age, e.g. 7d or 36h (namespace mode)', '7d')
    .option('--type <workflowType...>', 'only these workflow types')
    .option('--save <dir>', 'save downloaded histories there (namespace mode), e.g. to add them to the fixtures')
    .option('--fixtures <dir...>', 'fixture directories (fixture mode)', FIXTURE_DIRS)
    .parse();
  const o = program.opts<{
    namespace?: boolean;
    perType: string;
    since: string;
    type?: string[];
    save?: string;
    fixtures: string[];
  }>();

  const exported = exportedWorkflowTypes();
  const types = o.type ?? exported;
  const unknown = types.filter((t) => !exported.includes(t));
  if (unknown.length > 0) throw new Error(`not exported by src/workflows: ${unknown.join(', ')}`);

  const config = o.namespace ? loadConfig() : loadConfig({});
  // The replay workers' own lines (and the non-determinism they report) only at warn and above, on stderr.
  installTemporalRuntime(createLogger({ level: 'error', name: 'replay', destination: process.stderr }));
  process.stderr.write('bundling the current workflow code…\n');
  const workflowBundle = await bundleCurrentWorkflows();

  let outcomes;
  if (o.namespace) {
    const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
    try {
      process.stderr.write(
        `downloading up to ${o.perType} executions per type from ${config.temporal.address}, namespace ${config.temporal.namespace}, since ${o.since}…\n`,
      );
      const targets = downloadHistories(client, {
        workflowTypes: types,
        perType: Number(o.perType),
        since: parseSince(o.since),
        ...(o.save ? { saveDir: o.save } : {}),
      });
      outcomes = await replayAll(targets, { encryption: config.encryption, workflowBundle });
    } finally {
      await client.connection.close();
    }
  } else {
    // Fixtures were recorded with the embedded development key.
    const targets = loadFixtures(o.fixtures, process.cwd()).filter((t) => types.includes(t.workflowType));
    outcomes = await replayAll(targets, { encryption: config.encryption, workflowBundle });
  }

  for (const row of summarise(outcomes, types)) {
    const note =
      row.replayed === 0
        ? o.namespace
          ? 'no executions found'
          : 'NO FIXTURE'
        : row.failed > 0
          ? `${row.failed} FAILED`
          : 'ok';
    console.log(`${row.workflowType.padEnd(40)} ${String(row.replayed).padStart(4)} replayed  ${note}`);
  }
  const failed = outcomes.filter((x) => x.error);
  for (const f of failed) console.log(`\n${f.workflowType} ${f.name}:\n  ${f.error}`);
  console.log(`\n${outcomes.length} histories, ${failed.length} failed`);
  return failed.length > 0 ? 1 : 0;
}

runCommand(main);
