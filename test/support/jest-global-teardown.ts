export default async function globalTeardown(): Promise<void> {
  await Promise.all([globalThis.__TEMPORAL_DEV_SERVER__?.stop(), globalThis.__CLAIM_CHECK_DB__?.stop()]);
}
