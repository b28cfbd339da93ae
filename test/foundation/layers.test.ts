// The layer order of src (docs/architecture.md, "Layers"): a folder imports only folders on a lower
// layer, never one on its own layer or above, and no files or folders import each other in a circle.
// Type-only imports count: a type that runs back up ties the folders together all the same.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import {
  backArrows,
  circles,
  folderGraph,
  folderOf,
  importGraph,
  sourceFiles,
  without,
  type Graph,
} from '../../scripts/import-graph';

const ROOT = join(__dirname, '..', '..');
const SRC = join(ROOT, 'src');

/** Top to bottom, as docs/architecture.md states it; folders on one row may not import each other. */
export const LAYERS: readonly (readonly string[])[] = [
  ['stack'],
  ['workers'],
  ['nexus'],
  ['starters', 'webhooks'],
  ['workflows'],
  ['activities'],
  ['virtual-accounts', 'sandbox'],
  ['claim-check', 'temporal'],
  ['codec'],
  ['observability'],
  ['config', 'api'],
  ['notify'],
  ['http'],
  ['logging'],
  ['telemetry'],
  ['shared'],
];

/**
 * Known exceptions, by name (`a -> b`, or a circle's files joined by ` <-> `): none today. A row names
 * an arrow or circle that was there before the test, until its owner mends it; a new arrow back up
 * or a new circle is never covered by one.
 */
const KNOWN_BACK_ARROWS: Record<string, string> = {};
const KNOWN_CIRCLES: Record<string, string> = {};

const circleName = (part: string[]) => part.join(' <-> ');

describe('the layers of src (docs/architecture.md)', () => {
  const graph = importGraph(ROOT, sourceFiles(SRC));

  it('places every folder of src on exactly one layer', () => {
    const folders = [...new Set([...graph.keys()].map(folderOf))].sort();
    const placed = LAYERS.flat();
    expect(folders.filter((folder) => !placed.includes(folder))).toEqual([]);
    expect(placed.filter((folder, i) => placed.indexOf(folder) !== i)).toEqual([]);
  });

  it('has no import running back up the layers (or across one layer), except the named ones', () => {
    expect(backArrows(graph, LAYERS).filter((arrow) => !(arrow in KNOWN_BACK_ARROWS))).toEqual([]);
  });

  it('has no circle between files, except the named ones', () => {
    expect(
      circles(graph)
        .map(circleName)
        .filter((name) => !(name in KNOWN_CIRCLES)),
    ).toEqual([]);
  });

  it('has no circle between folders once the named back arrows are set aside', () => {
    expect(circles(folderGraph(without(graph, Object.keys(KNOWN_BACK_ARROWS))))).toEqual([]);
  });

  it('states the same layers in docs/architecture.md', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d+) \| ((?:`src\/[\w-]+`(?:, )?)+) \|/gm)].map((m) => ({
      layer: Number(m[1]),
      folders: [...m[2].matchAll(/`src\/([\w-]+)`/g)].map((f) => f[1]),
    }));
    expect(rows.map((row) => row.folders)).toEqual(LAYERS.map((row) => [...row]));
    expect(rows.map((row) => row.layer)).toEqual(LAYERS.map((_, i) => LAYERS.length - i));
  });
});

describe('the layer check itself', () => {
  const g = (edges: [string, string][]): Graph => {
    const graph: Graph = new Map();
    for (const [a, b] of edges) {
      graph.set(a, (graph.get(a) ?? new Set()).add(b));
      if (!graph.has(b)) graph.set(b, new Set());
    }
    return graph;
  };
  const layers = [['top'], ['left', 'right'], ['ground']];

  it('finds an arrow up, an arrow across a layer, and an arrow into an unplaced folder', () => {
    const graph = g([
      ['src/top/a.ts', 'src/ground/b.ts'],
      ['src/ground/b.ts', 'src/top/c.ts'],
      ['src/left/d.ts', 'src/right/e.ts'],
      ['src/nowhere/f.ts', 'src/ground/b.ts'],
    ]);
    expect(backArrows(graph, layers)).toEqual([
      'src/ground/b.ts -> src/top/c.ts',
      'src/left/d.ts -> src/right/e.ts',
      'src/nowhere/f.ts -> src/ground/b.ts',
    ]);
  });

  it('finds a circle of two files and one of three, and none in a chain', () => {
    const graph = g([
      ['a', 'b'],
      ['b', 'a'],
      ['c', 'd'],
      ['d', 'e'],
      ['e', 'c'],
      ['e', 'f'],
    ]);
    expect(circles(graph).map(circleName).sort()).toEqual(['a <-> b', 'c <-> d <-> e']);
    expect(
      circles(
        g([
          ['a', 'b'],
          ['b', 'c'],
        ]),
      ),
    ).toEqual([]);
  });

  it('reads type-only imports, re-exports and import() types as arrows', () => {
    const { importedFiles } = ts.preProcessFile(
      "import type { A } from './a';\nexport { B } from './b';\ntype C = import('./c').C;\n// import { D } from './d';\n",
      true,
      true,
    );
    expect(importedFiles.map((f) => f.fileName)).toEqual(['./a', './b', './c']);
  });
});
