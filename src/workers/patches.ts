// The patches in use (every `patched(...)` call in src/workflows) and a rehearsal of retiring one:
// the workflow code bundled as it will be after the deprecation step — `patched(id)` replaced by
// `(deprecatePatch(id), true)`, the old branch never taken — so that replaying histories against it
// lists the executions that still need the old branch (docs/operations.md, "Patches in use").
// Used by `npm run replay -- --retire <id>` and test/replay/patches.test.ts.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

const SRC = resolve(__dirname, '..');
const ROOT = resolve(SRC, '..');

export interface PatchUse {
  id: string;
  /** File under src/workflows. */
  file: string;
  /** The call as written, e.g. `patched('webhook-verified')` or `!patched(VA_DURABLE_DEDUPE_PATCH)`. */
  call: string;
}

const CALL = /(!?)patched\(\s*(?:'([^']+)'|([A-Z][A-Z0-9_]*))\s*\)/g;

/** Every patched(...) call in the workflow code, its id resolved (string literal or a constant of the same file). */
export function patchesInUse(workflowsDir: string = join(SRC, 'workflows')): PatchUse[] {
  const uses: PatchUse[] = [];
  for (const file of readdirSync(workflowsDir)
    .filter((f) => f.endsWith('.ts'))
    .sort()) {
    const text = readFileSync(join(workflowsDir, file), 'utf8');
    for (const m of text.matchAll(CALL)) {
      const id = m[2] ?? new RegExp(`const ${m[3]}\\s*=\\s*'([^']+)'`).exec(text)?.[1];
      if (!id) throw new Error(`${file}: cannot resolve the patch id of ${m[0]}`);
      uses.push({ id, file, call: m[0] });
    }
  }
  return uses;
}

/** The distinct patch ids in use. */
export const patchIds = (uses: PatchUse[] = patchesInUse()): string[] => [...new Set(uses.map((u) => u.id))].sort();

/**
 * The current workflows bundled with patch `id` deprecated (its old branch gone). Histories that fail
 * to replay against this bundle are the ones that still need the old branch.
 */
export async function bundleWithPatchRetired(
  id: string,
  interceptorModules: (srcCopy: string) => string[] = (src) => [join(src, 'workflows', 'metrics-interceptor.ts')],
): Promise<WorkflowBundleWithSourceMap> {
  const uses = patchesInUse().filter((u) => u.id === id);
  if (uses.length === 0) throw new Error(`no patched('${id}') in src/workflows (in use: ${patchIds().join(', ')})`);
  const dir = mkdtempSync(join(tmpdir(), 'payflow-retire-'));
  try {
    const copy = join(dir, 'src');
    cpSync(SRC, copy, { recursive: true });
    for (const file of new Set(uses.map((u) => u.file))) {
      const path = join(copy, 'workflows', file);
      let text = readFileSync(path, 'utf8');
      for (const u of uses.filter((x) => x.file === file)) {
        const arg = u.call.replace(/^!?patched\(\s*/, '').replace(/\s*\)$/, '');
        text = text.split(u.call).join(`(deprecatePatch(${arg}), ${u.call.startsWith('!') ? 'false' : 'true'})`);
      }
      writeFileSync(path, `import { deprecatePatch } from '@temporalio/workflow';\n${text}`);
    }
    return await bundleWorkflowCode({
      workflowsPath: join(copy, 'workflows'),
      workflowInterceptorModules: interceptorModules(copy),
      failureConverterPath: join(copy, 'codec', 'failure-converter.ts'),
      // The copy lives outside the project: resolve packages from the project's node_modules.
      webpackConfigHook: (config) => ({
        ...config,
        resolve: {
          ...config.resolve,
          modules: [...(config.resolve?.modules ?? ['node_modules']), join(ROOT, 'node_modules')],
        },
      }),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
