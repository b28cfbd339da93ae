// Production mode, read from the environment: config, the logger, the sandbox and the CLI's test
// environment all ask it, so it sits below them all.
/** Why production mode is on: any of these says production. */
export function productionModeOf(env: {
  NODE_ENV?: string;
  DEPLOYMENT?: string;
  PAYMENTS_ENVIRONMENT?: string;
}): boolean {
  return env.NODE_ENV === 'production' || env.DEPLOYMENT === 'production' || env.PAYMENTS_ENVIRONMENT === 'production';
}
