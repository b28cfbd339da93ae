// Worker Versioning (docs/operations.md, "Change a workflow"): the worker runs as one version of a
// Worker Deployment, named by WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID. Pinned flows finish on the
// version that started them; auto-upgrade flows move to the current version (their changes are patched).
// This module only parses; src/workers/versioning.ts turns it into the SDK's options.
import { z } from 'zod';

const onOff = () => z.enum(['on', 'off'], 'must be "on" or "off"');

export const workerDeploymentEnvShape = {
  // off: an unversioned worker (every flow runs on whichever worker polls; changes need patches).
  WORKER_VERSIONING: onOff().default('on'),
  WORKER_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'must be letters, digits, ".", "_" or "-" (at most 100)')
    .default('payflow'),
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
