// Ports we pick for our own children lie below the kernel's ephemeral range, where no outgoing
// connection can take them between our pick and the child's bind (a CI run lost its PostgreSQL so).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort } from '../../src/http/free-port';

function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return 32_768;
  }
}

describe('freePort', () => {
  it('picks distinct, bindable ports below the ephemeral range', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 50; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(ephemeralLow());
    }
    const srv = createServer();
    await new Promise<void>((done) => srv.listen(ports[0], '127.0.0.1', done));
    await new Promise<void>((done) => srv.close(() => done()));
  });
});
