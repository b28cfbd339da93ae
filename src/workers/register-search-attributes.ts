// One-shot: registers SEARCH_ATTRIBUTE_REGISTRATION on TEMPORAL_NAMESPACE at TEMPORAL_ADDRESS
// (TLS / API key from the same variables as every process). Retries while the server comes up.
import { bootstrap } from '../config/bootstrap';
import { loadAdminConfig } from '../config/processes';
import { connectTemporalClient } from '../temporal/client';
import { ensureSearchAttributes } from './search-attribute-setup';

async function main(): Promise<void> {
  const { config, logger } = bootstrap('search-attributes', () => loadAdminConfig());
  const deadline = Date.now() + 120_000;
  for (let attempt = 1; ; attempt++) {
    try {
      const connection = await connectTemporalClient(config.temporal);
      try {
        const result = await ensureSearchAttributes(connection, config.temporal.namespace);
        logger.info(result, 'search attributes registered');
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      if ((err as Error).name === 'SearchAttributeConflictError' || Date.now() > deadline) throw err;
      logger.warn(
        { attempt, err: (err as Error).message },
        'Temporal not ready for search attribute registration; retrying',
      );
      await new Promise((r) => setTimeout(r, 2_000));
    }
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
