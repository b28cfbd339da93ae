// The import graph of src, read from the code's own import lines (import, import type, export from,
// import(), require), and what the layer rules ask of it: the arrows that do not run down a layer
// order, and the circles. One home for test/foundation/layers.test.ts and scripts/shape-table.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export type Graph = Map<string, Set<string>>;

export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The file a relative specifier names (`./x` is x.ts or x/index.ts), or undefined for a package. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  return [`${base}.ts`, join(base, 'index.ts'), base].find(
    (candidate) => existsSync(candidate) && candidate.endsWith('.ts'),
  );
}

/** file -> the files of src it imports, paths from `root`. */
export function importGraph(root: string, files: string[]): Graph {
  const graph: Graph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles.flatMap((imported) => resolveImport(file, imported.fileName) ?? []);
    graph.set(relative(root, file), new Set(targets.map((target) => relative(root, target))));
  }
  return graph;
}

/** `src/<folder>/...` -> folder (a file right under src is its own folder). */
export function folderOf(path: string): string {
  return path.split('/')[1].replace(/\.ts$/, '');
}

/** Every import between two folders that does not run down the layers: `a -> b`. */
export function backArrows(graph: Graph, layers: readonly (readonly string[])[]): string[] {
  const layerOf = (folder: string) => layers.findIndex((row) => row.includes(folder));
  const out: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const [a, b] = [folderOf(from), folderOf(to)];
      if (a !== b && !(layerOf(a) >= 0 && layerOf(b) > layerOf(a))) out.push(`${from} -> ${to}`);
    }
  }
  return out;
}

/** The strongly connected parts of more than one node (Tarjan), each sorted. */
export function circles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      part.push(member);
    } while (member !== node);
    if (part.length > 1) found.push(part.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The graph without the arrows that `skip` names (`a -> b`). */
export function without(graph: Graph, skip: Iterable<string>): Graph {
  const skipped = new Set(skip);
  return new Map(
    [...graph].map(([from, targets]) => [from, new Set([...targets].filter((to) => !skipped.has(`${from} -> ${to}`)))]),
  );
}

/** Folder -> the folders its files import. */
export function folderGraph(graph: Graph): Graph {
  const folders: Graph = new Map();
  for (const [from, targets] of graph) {
    const own = folders.get(folderOf(from)) ?? new Set<string>();
    for (const to of targets) if (folderOf(to) !== folderOf(from)) own.add(folderOf(to));
    folders.set(folderOf(from), own);
  }
  return folders;
}
