// Every package the shipped code (src/, compiled into dist/) imports is a dependency in package.json:
// a backend installs only `dependencies`, and a strict installer (pnpm) gives the package no other.
// An import that resolves here only because npm hoisted a transitive package fails in a backend.
// Reads the sources (no build, no network): import/export ... from, side-effect imports, require(),
// import() and require.resolve() with a literal name; Node built-ins and relative paths are not packages.
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';

const SPECIFIER = /\b(?:from\s+|import\s+|require\(\s*|import\(\s*|require\.resolve\(\s*)['"]([^'"\s]+)['"]/g;

const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The package a specifier names (`@scope/name/sub` → `@scope/name`), or undefined for a built-in or a path. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtinModules.includes(name) ? undefined : name;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.[cm]?[jt]s$/.test(entry.name) ? [path] : [];
  });
}

/** Each package imported under src/, with the first file that imports it. */
function importedPackages(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of sourceFiles(join(PROJECT_ROOT, 'src'))) {
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const name = packageOf(match[1]);
      if (name && !found.has(name)) found.set(name, relative(PROJECT_ROOT, file));
    }
  }
  return found;
}

/** `<package> (imported by <file>)` for each imported package that `declared` lacks. */
function undeclared(imported: Map<string, string>, declared: Record<string, string>): string[] {
  return [...imported].filter(([name]) => !(name in declared)).map(([name, file]) => `${name} (imported by ${file})`);
}

describe('the packages src/ imports', () => {
  const imported = importedPackages();

  it('finds the imports it checks (the scan reads the sources)', () => {
    for (const name of ['@temporalio/client', '@temporalio/nexus', 'nexus-rpc', 'zod', 'undici'])
      expect(imported.has(name)).toBe(true);
    expect(packageOf('node:fs')).toBeUndefined();
    expect(packageOf('crypto')).toBeUndefined();
    expect(packageOf('@temporalio/worker/lib/x')).toBe('@temporalio/worker');
  });

  it('are all in package.json dependencies (not devDependencies, not hoisted transitive packages)', () => {
    expect(undeclared(imported, pkg.dependencies)).toEqual([]);
  });

  it('a dependency taken away is named with the file that imports it', () => {
    const { ['nexus-rpc']: _dropped, ...fewer } = pkg.dependencies;
    expect(undeclared(imported, fewer)).toEqual([expect.stringMatching(/^nexus-rpc \(imported by src\/nexus\//)]);
  });
});
