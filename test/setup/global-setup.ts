// One Temporal dev server (in memory, free ports) for the whole jest run.
// Test files reach it through TEMPORAL_TEST_ADDRESS.
import { startDevServer, type DevServer } from '../../src/stack/temporal-dev-server';

declare global {
  var __TEMPORAL_DEV_SERVER__: DevServer | undefined;
}

export default async function globalSetup(): Promise<void> {
  if (process.env.TEMPORAL_TEST_ADDRESS) return; // an external server was provided
  const server = await startDevServer({ uiPort: null });
  globalThis.__TEMPORAL_DEV_SERVER__ = server;
  process.env.TEMPORAL_TEST_ADDRESS = server.address;
}
