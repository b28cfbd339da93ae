// One config schema per process (docs/configuration.md, "Which process reads what"): each process
// validates, and is given, only the variables it reads, so a Deployment mounts only its own secrets
// and a production guard on one process's secret never stops another. The field definitions stay
// in config.ts (envSchema); a process's schema is a pick of them by section, so nothing is defined
// twice and every variable belongs to exactly one section (a test checks it).
import { z } from 'zod';
import {
  buildConfig,
  cleanEnvironment,
  ConfigError,
  envSchema,
  rawEnvironmentIssues,
  variableIssues,
  type AppConfig,
  type Env,
} from './config';
import { resolveTemporalConnection } from './temporal-profile';
import { productionModeOf } from '../shared/production-mode';
import { observabilityEnvShape } from './observability';
import { workerTuningEnvShape } from './worker-tuning';
import { workerDeploymentEnvShape } from './worker-deployment';
import { taskQueuesEnvShape } from './task-queues';
import { returnLinkEnvShape } from './return-links';

/** A section of AppConfig that is read from variables. */
export type ConfigSection = Exclude<keyof AppConfig, 'production'>;

const shapeKeys = (shape: Record<string, unknown>) => new Set(Object.keys(shape));
const observabilityKeys = shapeKeys(observabilityEnvShape);
const tuningKeys = shapeKeys(workerTuningEnvShape);
const deploymentKeys = shapeKeys(workerDeploymentEnvShape);
const taskQueueKeys = shapeKeys(taskQueuesEnvShape);
const returnLinkKeys = shapeKeys(returnLinkEnvShape);

/** Which section a variable of envSchema belongs to (by the shape it comes from, else by its prefix). */
export function sectionOf(variable: string): ConfigSection | 'mode' | undefined {
  if (variable === 'DEPLOYMENT' || variable === 'NODE_ENV') return 'mode';
  if (observabilityKeys.has(variable)) return 'observability';
  if (tuningKeys.has(variable)) return 'worker';
  if (deploymentKeys.has(variable)) return 'deployment';
  if (taskQueueKeys.has(variable)) return 'taskQueues';
  if (returnLinkKeys.has(variable)) return 'returnLinks';
  const prefixes: [RegExp, ConfigSection][] = [
    [/^PAYMENTS_/, 'payments'],
    [/^TEMPORAL_/, 'temporal'],
    [/^SANDBOX_/, 'sandbox'],
    [/^WEBHOOK_/, 'webhooks'],
    [/^CODEC_/, 'codec'],
    [/^PAYLOAD_ENCRYPTION_/, 'encryption'],
    [/^CLAIM_CHECK_/, 'claimCheck'],
    [/^VA_/, 'virtualAccounts'],
    [/^RECONCILIATION_/, 'reconciliation'],
    [/^NOTIFY_/, 'notify'],
    [/^LOG_LEVEL$/, 'logLevel'],
  ];
  return prefixes.find(([re]) => re.test(variable))?.[1];
}

/** The processes we ship, and the sections each reads. */
export const PROCESS_SECTIONS = {
  worker: [
    'payments',
    'temporal',
    'encryption',
    'claimCheck',
    'virtualAccounts',
    'reconciliation',
    'notify',
    'observability',
    'worker',
    'taskQueues',
    'deployment',
    'logLevel',
  ],
  receiver: ['payments', 'temporal', 'encryption', 'webhooks', 'returnLinks', 'observability', 'logLevel'],
  codec: ['codec', 'encryption', 'observability', 'logLevel'],
  /**
   * The CLI and the starters a backend embeds: they seal card data (claim check), sign return links,
   * call the service. Not `notify`: where events go (NOTIFY_URL, signed with NOTIFY_SECRET) is the worker's.
   */
  cli: ['payments', 'temporal', 'encryption', 'claimCheck', 'returnLinks', 'logLevel'],
  /** One-off administration (the search-attribute Job): Temporal only. */
  admin: ['temporal', 'logLevel'],
  sandbox: ['sandbox', 'logLevel'],
} as const satisfies Record<string, readonly ConfigSection[]>;

export type ProcessKind = keyof typeof PROCESS_SECTIONS;

/** Variables read outside their own section (a default of another setting). */
const EXTRA_VARIABLES: Partial<Record<ProcessKind, readonly string[]>> = {
  // The codec server's default CORS origins are the Web UI's own, on TEMPORAL_UI_PORT (development only).
  codec: ['TEMPORAL_UI_PORT'],
};

/** Every variable of envSchema a process reads, production-mode switches included. */
export function processVariables(kind: ProcessKind): string[] {
  const sections = new Set<string>([...PROCESS_SECTIONS[kind], 'mode']);
  return Object.keys(envSchema.shape).filter(
    (v) => sections.has(sectionOf(v) ?? '') || v === 'PAYMENTS_ENVIRONMENT' || EXTRA_VARIABLES[kind]?.includes(v),
  );
}

/** The configuration a process gets: only its sections (and `production`). */
export type ProcessConfig<K extends ProcessKind> = Pick<AppConfig, 'production' | (typeof PROCESS_SECTIONS)[K][number]>;

/**
 * Parses the environment with the process's own schema: variables of other processes are neither
 * validated nor read (their rules, production guards included, do not apply here). Throws
 * ConfigError naming each bad variable of this process and its rule.
 */
export function loadProcessConfig<K extends ProcessKind>(
  kind: K,
  source: NodeJS.ProcessEnv = process.env,
): ProcessConfig<K> {
  const variables = new Set(processVariables(kind));
  const cleaned = cleanEnvironment(source);
  const own = Object.fromEntries(Object.entries(cleaned).filter(([name]) => variables.has(name)));
  // The process's fields, picked from the one definition in envSchema.
  const shape = Object.fromEntries(
    Object.entries(envSchema.shape).filter(([name]) => variables.has(name)),
  ) as typeof envSchema.shape;
  const fields = z.object(shape).safeParse(own);
  const issues = fields.success ? [] : variableIssues(fields.error);
  // The cross-variable and production rules of envSchema, kept for this process's variables only
  // (the others take their defaults here and are not this process's concern).
  if (fields.success) {
    const ruled = envSchema.safeParse(own);
    if (!ruled.success) issues.push(...variableIssues(ruled.error).filter((i) => variables.has(i.variable)));
  }
  const readsTemporal = (PROCESS_SECTIONS[kind] as readonly string[]).includes('temporal');
  const temporal = resolveTemporalConnection(readsTemporal ? cleaned : {}, productionModeOf(cleaned));
  if (readsTemporal) issues.push(...temporal.issues);
  // Production's https rule on every *WEBHOOK*_URL of the environment, whoever reads it (docs/security.md).
  issues.push(...rawEnvironmentIssues(cleaned));
  if (!fields.success || issues.length > 0) throw new ConfigError(issues);
  // Built whole (the variables it does not read at their defaults, rules not run on them), then cut
  // down to the process's sections: nothing of another process reaches it.
  const full = buildConfig(z.object(envSchema.shape).parse(own) as Env, temporal.settings);
  const picked: Record<string, unknown> = { production: full.production };
  for (const section of PROCESS_SECTIONS[kind]) picked[section] = full[section];
  return picked as ProcessConfig<K>;
}

export const loadWorkerConfig = (source?: NodeJS.ProcessEnv) => loadProcessConfig('worker', source);
export const loadReceiverConfig = (source?: NodeJS.ProcessEnv) => loadProcessConfig('receiver', source);
export const loadCodecConfig = (source?: NodeJS.ProcessEnv) => loadProcessConfig('codec', source);
export const loadCliConfig = (source?: NodeJS.ProcessEnv) => loadProcessConfig('cli', source);
export const loadAdminConfig = (source?: NodeJS.ProcessEnv) => loadProcessConfig('admin', source);
export const loadSandboxConfig = (source?: NodeJS.ProcessEnv) => loadProcessConfig('sandbox', source);

/** The variables of the process that hold secrets: what its Secret (k8s) carries, and nothing more. */
export const SECRET_VARIABLES = [
  'PAYMENTS_SECRET_KEY',
  'PAYLOAD_ENCRYPTION_KEYS',
  'CODEC_SERVER_TOKEN',
  'CLAIM_CHECK_KEYS',
  'CLAIM_CHECK_DATABASE_URL',
  'SANDBOX_ADMIN_TOKEN',
  'TEMPORAL_API_KEY',
  'VA_CREDIT_CALLBACK_SECRET',
  'NOTIFY_SECRET',
  'RETURN_LINK_KEY',
] as const;

export function processSecretVariables(kind: ProcessKind): string[] {
  const variables = new Set(processVariables(kind));
  return SECRET_VARIABLES.filter((v) => variables.has(v));
}
