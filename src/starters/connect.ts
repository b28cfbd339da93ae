// How backends reach the payment workflows: a Temporal client with the project's
// encrypted data converter, the claim-check store the starters seal card data, PINs, OTPs
// and BVNs into, and the payments service's API client (for the direct calls: listings, templates,
// account creation, the POS terminal session), configured from the same environment as the worker.
// Every starter takes this one context first (or the part of it it needs: Pick<StarterContext, ...>).
import type { Client } from '@temporalio/client';
import { loadConfig, type AppConfig } from '../config/config';
import type { ReturnLinkConfig } from '../config/return-links';
import { loadCliConfig, type ProcessConfig } from '../config/processes';

type CliConfig = ProcessConfig<'cli'>;
import { ClaimCheckStore } from '../claim-check/store';
import { VirtualAccountCreditStore } from '../virtual-accounts/credit-store';
import { createTemporalClient } from '../temporal/client';
import { PaymentsClient } from '../api/client';
import { serviceCallObserver } from '../observability/service-calls';

export interface StarterContext {
  client: Client;
  taskQueue: string;
  /** Where secrets are sealed before a flow sees them (only a handle enters Temporal). */
  claimCheck: ClaimCheckStore;
  /** The payments service, for the calls that move no money and start no flow (no Temporal involved). */
  api: PaymentsClient;
  /** RETURN_LINK_KEY and TTL: the starters sign the return URLs they build (src/config/return-links.ts). */
  returnLinks?: ReturnLinkConfig;
  /** PAYMENTS_LISTS_POS_REMOTE_REQUESTS: a lost create answer the transaction list never showed may end not_sent (else outcome_unknown). */
  listsPosRemoteRequests?: boolean;
}

/** Opens the claim-check store of `config` (one per process; close it on shutdown). */
export const openClaimCheck = (config: Pick<AppConfig, 'claimCheck'>): Promise<ClaimCheckStore> =>
  ClaimCheckStore.connect({
    databaseUrl: config.claimCheck.databaseUrl,
    keys: config.claimCheck.keys,
    activeKeyId: config.claimCheck.activeKeyId,
    ttlMs: config.claimCheck.ttlMs,
    cardTtlMs: config.claimCheck.cardTtlMs,
  });

/** Opens the durable record of credited virtual-account transactions (same PostgreSQL as the claim-check, own table). */
export const openVirtualAccountCredits = (config: Pick<AppConfig, 'claimCheck'>): Promise<VirtualAccountCreditStore> =>
  VirtualAccountCreditStore.connect({ databaseUrl: config.claimCheck.databaseUrl });

/** The one place a PaymentsClient is built from config (pointed elsewhere, e.g. at a sandbox, with `baseUrl`); its calls are metered and traced. */
export const openPaymentsClient = (
  config: Pick<AppConfig, 'payments'> = loadConfig(),
  baseUrl: string = config.payments.baseUrl,
): PaymentsClient =>
  new PaymentsClient({
    baseUrl,
    secretKey: config.payments.secretKey,
    timeoutMs: config.payments.timeoutMs,
    paths: config.payments.paths,
    observer: serviceCallObserver(baseUrl),
  });

/**
 * Connects the starters. Default: the CLI/starters' own configuration (loadCliConfig: Temporal, the
 * payload and claim-check keys, the payments service, the return-link key; nothing of the
 * worker's, such as NOTIFY_URL, nor of the receiver's or codec server's). A full AppConfig fits too.
 */
export async function connectStarters(config: CliConfig = loadCliConfig()): Promise<StarterContext> {
  const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  // A claim-check store that cannot be opened leaves no Temporal connection behind (a caller that
  // goes on living, such as a CLI run inside a test, would keep it open).
  const claimCheck = await openClaimCheck(config).catch(async (err: unknown) => {
    await client.connection.close();
    throw err;
  });
  return {
    client,
    taskQueue: config.temporal.taskQueue,
    claimCheck,
    api: openPaymentsClient(config),
    returnLinks: config.returnLinks,
    listsPosRemoteRequests: config.payments.listsPosRemoteRequests,
  };
}

/** Closes what connectStarters opened: the claim-check store, the API client's pool and the Temporal connection. */
export async function closeStarters(ctx: StarterContext): Promise<void> {
  await ctx.claimCheck.close();
  await ctx.api.close();
  await ctx.client.connection.close();
}
