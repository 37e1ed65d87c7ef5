import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The layering of lib/ (README "Architecture"): the folders' value imports form no cycle, and only
 * the module wiring (lib/*.ts) imports the adapters (the migrations use their identifier quoting). ESLint checks the driver imports per file;
 * this checks the shape as a whole, which no per-file rule sees.
 */
const LIB = resolve(__dirname, '../../lib');
const VALUE_IMPORT = /^import\s+(?!type\s)[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/gm;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** A file's folder: `adapters/<name>` for adapters, the top folder otherwise, `.` for lib/*.ts. */
function folderOf(file: string): string {
  const parts = relative(LIB, file).split(sep);
  if (parts.length === 1) return '.';
  return parts[0] === 'adapters' && parts.length > 2 ? `adapters/${parts[1]}` : parts[0];
}

function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(LIB)) {
    const from = folderOf(file);
    for (const match of readFileSync(file, 'utf8').matchAll(VALUE_IMPORT)) {
      const to = folderOf(resolve(dirname(file), `${match[1]}.ts`));
      if (to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** Every cycle's folders (strongly connected components of more than one folder). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('architecture of lib/', () => {
  const graph = folderGraph();

  it('has no import cycle between folders', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('lets only the module wiring (and the migrations, for identifier quoting) import the adapters', () => {
    const importers = [...graph]
      .filter(
        ([from, to]) =>
          !from.startsWith('adapters') && [...to].some((t) => t.startsWith('adapters')),
      )
      .map(([from]) => from);
    expect(importers.sort()).toEqual(['.', 'migrations']);
  });

  it('keeps the port free of adapters and engine code', () => {
    expect([...(graph.get('ports') ?? [])].sort()).toEqual([]);
  });

  it('finds the cycle a folder importing back would make (the check itself works)', () => {
    const withBackEdge = new Map([...graph].map(([from, to]) => [from, new Set(to)]));
    withBackEdge.set('ports', new Set(['runner']));
    expect(cycles(withBackEdge).some((cycle) => cycle.includes('ports'))).toBe(true);
  });
});
