// `npm run bench:profile -- [vend|card] [flows] [ours|baseline] [worker|starter|receiver]`: where our
// worker's (or the baseline's) CPU goes, with `starter` where the client side's goes (this process:
// the starts, their validation and sealing, and the waits for results), with `receiver` where our
// webhook receiver's goes (the service's notifications verified and turned into signals). Runs flows through the bench
// stack with the worker under --cpu-prof (or this process under the inspector's profiler), then prints
// the self time per package/module and the top functions. A tool for finding overhead; it prints
// figures and asserts nothing.
import { Session } from 'node:inspector/promises';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedLoop } from './lib/load';
import { startBenchStack } from './lib/stack';
import { baselineCard, baselineVend, oursCard, oursVend } from './scenarios/flows';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  startTime: number;
  endTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package, our src/ folder, the workflow bundle, or node internals. */
export function area(url: string): string {
  if (!url) return '(native/gc/idle)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const src = /\/(src\/[^/]+)\//.exec(url);
  if (src) return src[1];
  if (url.startsWith('node:')) return url;
  if (/workflow-bundle|webpack|\.js$/.test(url) && !url.startsWith('file://'))
    return `(workflow sandbox) ${url.slice(0, 40)}`;
  return url.replace(/^file:\/\/.*\/work\/[^/]+\//, '');
}

async function main(): Promise<void> {
  const kind = process.argv[2] === 'card' ? 'card' : 'vend';
  const flows = Number(process.argv[3] ?? 150);
  const side = process.argv[4] === 'baseline' ? 'baseline' : 'ours';
  const target = (['starter', 'receiver'] as const).find((t) => t === process.argv[5]) ?? 'worker';
  const dir = await mkdtemp(join(tmpdir(), 'bench-prof-'));
  const cpuProf = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
  const stack = await startBenchStack({
    log: console.log,
    posRemoteCompleteAfterMs: 5_000,
    ...(target === 'worker' ? { [side === 'ours' ? 'workerNodeArgs' : 'baselineNodeArgs']: cpuProf } : {}),
    ...(target === 'receiver' ? { receiverNodeArgs: cpuProf } : {}),
  });
  const inspector = target === 'starter' ? new Session() : undefined;
  let measured: { from: number; to: number };
  let measuredFlows = 0;
  try {
    const flow =
      side === 'ours'
        ? () => (kind === 'vend' ? oursVend(stack) : oursCard(stack))
        : () => (kind === 'vend' ? baselineVend(stack) : baselineCard(stack));
    const worker = target === 'receiver' ? stack.receiver : side === 'ours' ? stack.ours : stack.baseline;
    await closedLoop(20, 10, flow);
    const cpu0 = worker.cpuMs();
    const client0 = process.cpuUsage();
    if (inspector) {
      inspector.connect();
      await inspector.post('Profiler.enable');
      await inspector.post('Profiler.start');
    }
    const from = Date.now();
    const r = await closedLoop(flows, 20, flow);
    measured = { from, to: Date.now() };
    measuredFlows = r.latencies.length;
    if (inspector) {
      const { profile } = await inspector.post('Profiler.stop');
      await writeFile(join(dir, 'starter.cpuprofile'), JSON.stringify(profile));
      inspector.disconnect();
    }
    const client = process.cpuUsage(client0);
    console.log(
      `${r.latencies.length} ${kind} flows (${side}), worker CPU ${((worker.cpuMs() - cpu0) / r.latencies.length).toFixed(1)} ms per flow, ` +
        `this process (the client side) ${((client.user + client.system) / 1000 / r.latencies.length).toFixed(1)} ms per flow`,
    );
  } finally {
    await stack.stop();
  }
  // The worker's profile ends when it exits; the starter's when the measured window did.
  const exitedAt = target === 'starter' ? measured.to : Date.now();
  // One profile per thread: the main thread (activities, SDK, codec) and the workflow thread (the sandbox).
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  if (!files.length) throw new Error('no profile written');
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  for (const file of files) {
    const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as Profile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    // Only the samples of the measured window (the profile ends when the worker exits).
    const windowFrom = profile.endTime - (exitedAt - measured.from) * 1000;
    const windowTo = profile.endTime - (exitedAt - measured.to) * 1000;
    let t = profile.startTime;
    profile.samples.forEach((id, i) => {
      t += profile.timeDeltas[i] ?? 0;
      if (t < windowFrom || t > windowTo) return;
      const n = byId.get(id)!;
      if (n.callFrame.functionName === '(idle)') return;
      const us = profile.timeDeltas[i] ?? 0;
      total += us;
      const a = `${files.length > 1 ? `[thread ${file.split('.')[4] ?? file}] ` : ''}${area(n.callFrame.url)}`;
      areas.set(a, (areas.get(a) ?? 0) + us);
      const f = `${n.callFrame.functionName || '(anonymous)'} ${area(n.callFrame.url)}:${n.callFrame.lineNumber}`;
      fns.set(f, (fns.get(f) ?? 0) + us);
    });
  }
  const top = (m: Map<string, number>, k: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(
        ([name, us]) =>
          `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000 / measuredFlows).toFixed(2).padStart(6)} ms/flow  ${name}`,
      );
  console.log(`\nsampled CPU: ${(total / 1000 / measuredFlows).toFixed(2)} ms per flow (all threads)`);
  console.log('\nself time by area:\n' + top(areas, 25).join('\n'));
  console.log('\ntop functions:\n' + top(fns, 30).join('\n'));
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
