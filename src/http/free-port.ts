// A free TCP port for a process we start ourselves (dev server, PostgreSQL, tests' stacks) or for
// Core's metrics exporter (METRICS_PORT=0), which cannot report the port it took.
// Picked below the kernel's ephemeral range: a port the kernel hands out (listen(0)) is one it also
// gives to outgoing connections, so in the seconds between our pick and the child's bind another
// process's client could take it ("could not bind … Address already in use", seen in CI).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The lowest port we pick: above the well-known and common service ports. */
const LOWEST = 20_000;
/** Linux's default ephemeral range starts at 32768; macOS's at 49152. */
const DEFAULT_EPHEMERAL_LOW = 32_768;
const PICK_ATTEMPTS = 200;

/** Ports this process already handed out: never the same one twice, even once its probe closed. */
const handedOut = new Set<number>();

function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low && low > LOWEST + 1_000) return low;
  } catch {
    // not Linux: the default
  }
  return DEFAULT_EPHEMERAL_LOW;
}

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((done) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => done(false));
    srv.listen(port, host, () => srv.close(() => done(true)));
  });
}

function kernelPort(host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

/** A port nothing listens on now at `host`, outside the ephemeral range (a kernel-chosen one if none is found). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const high = ephemeralLow() - 1;
  for (let attempt = 0; attempt < PICK_ATTEMPTS; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (high - LOWEST + 1));
    if (handedOut.has(port)) continue;
    if (await bindable(port, host)) {
      handedOut.add(port);
      return port;
    }
  }
  return kernelPort(host);
}
