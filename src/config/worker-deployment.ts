// Worker Versioning (docs/operations.md, "Change a workflow"): the worker runs as one version of a
// Worker Deployment, named by WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID. Pinned flows finish on the
// version that started them; auto-upgrade flows move to the current version (their changes are patched).
// This module only parses; src/workers/versioning.ts turns it into the SDK's options.
import { z } from 'zod';

const onOff = () => z.enum(['on', 'off'], 'must be "on" or "off"');

/** The server's limit for each half of a version's id: (limit.maxIDLength 1000 - 39) / 2, in bytes. */
export const DEPLOYMENT_NAME_MAX_BYTES = 480;

/**
 * What Temporal accepts as a Worker Deployment name, no more and no less (server 1.32,
 * ValidateDeploymentVersionFields; test/workers/deployment-name.test.ts asks a dev server): "."
 * and ":" separate the name from the build id in the version's strings, "__" starts the server's own
 * names. "/" is allowed: the worker controller names deployments `<Kubernetes namespace>/<name>`.
 * (An empty value is no value: the default.)
 */
const deploymentName = () =>
  z
    .string()
    .refine(
      (s) => Buffer.byteLength(s, 'utf8') <= DEPLOYMENT_NAME_MAX_BYTES,
      `must be at most ${DEPLOYMENT_NAME_MAX_BYTES} bytes`,
    )
    .refine(
      (s) => !/[.:]/.test(s),
      'must not contain "." or ":" (Temporal writes a version as <name>.<build id> and <name>:<build id>)',
    )
    .refine((s) => !s.startsWith('__'), 'must not start with "__" (kept for Temporal\'s own names)');

export const workerDeploymentEnvShape = {
  // off: an unversioned worker (every flow runs on whichever worker polls; changes need patches).
  WORKER_VERSIONING: onOff().default('on'),
  WORKER_DEPLOYMENT_NAME: deploymentName().default('payflow'),
  // Default: the package version and the git commit (`1.0.0+3f2c1ab09e41`), or the version alone outside a checkout.
  WORKER_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9.+_-]{0,99}$/, 'must be letters, digits, ".", "+", "_" or "-" (at most 100)')
    .optional(),
  // on: the worker makes its own version current once it polls (development); off: a deploy step does
  // (`temporal worker deployment set-current-version`). Default: on, off in production mode.
  WORKER_MAKE_CURRENT: onOff().optional(),
};

export interface WorkerDeploymentConfig {
  /** Run as a Worker Deployment version (WORKER_VERSIONING=on). */
  versioning: boolean;
  deploymentName: string;
  /** Set explicitly (WORKER_BUILD_ID); otherwise src/workers/versioning.ts derives it. */
  buildId?: string;
  /** Make this version current at start (development). */
  makeCurrent: boolean;
}

type DeploymentEnv = {
  WORKER_VERSIONING: 'on' | 'off';
  WORKER_DEPLOYMENT_NAME: string;
  WORKER_BUILD_ID?: string;
  WORKER_MAKE_CURRENT?: 'on' | 'off';
};

export function workerDeploymentConfig(env: DeploymentEnv, production: boolean): WorkerDeploymentConfig {
  return {
    versioning: env.WORKER_VERSIONING === 'on',
    deploymentName: env.WORKER_DEPLOYMENT_NAME,
    ...(env.WORKER_BUILD_ID ? { buildId: env.WORKER_BUILD_ID } : {}),
    makeCurrent: (env.WORKER_MAKE_CURRENT ?? (production ? 'off' : 'on')) === 'on',
  };
}
