// The sandbox as its own process: `npm run sandbox` (port SANDBOX_PORT, default 4010).
import 'dotenv/config';
import { startSandbox } from './index';

async function main(): Promise<void> {
  const sandbox = await startSandbox({
    port: Number(process.env.SANDBOX_PORT ?? 4010),
    host: process.env.SANDBOX_HOST ?? '127.0.0.1',
    secretKeys: process.env.SANDBOX_SECRET_KEYS?.split(',').map((s) => s.trim()).filter(Boolean),
    webhookUrl: process.env.SANDBOX_WEBHOOK_URL,
    publicUrl: process.env.SANDBOX_PUBLIC_URL,
  });
  console.log(`payments sandbox listening on ${sandbox.url}`);
  const stop = () => void sandbox.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
