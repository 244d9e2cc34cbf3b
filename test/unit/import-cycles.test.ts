import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../src');

/** The catalog's modules and what each imports at run time (type-only imports too: a type imported back is a cycle all the same). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = readdirSync(ROOT, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  for (const file of files) {
    const path = join(ROOT, file);
    const source = readFileSync(path, 'utf8');
    const edges = [...source.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/gm)].map((m) =>
      resolve(dirname(path), m[1]!.replace(/\.js$/, '.ts')),
    );
    graph.set(path, edges.filter((e) => e.startsWith(ROOT)));
  }
  return graph;
}

describe('src', () => {
  it('has no import cycle (each module can be read, and loaded, before those that use it)', () => {
    const graph = importGraph();
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (node: string) => {
      state.set(node, 'open');
      stack.push(node);
      for (const next of graph.get(node) ?? []) {
        if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].map((p) => relative(ROOT, p)).join(' -> '));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(node, 'done');
    };
    for (const node of graph.keys()) if (!state.has(node)) visit(node);
    expect(graph.size).toBeGreaterThan(150);
    expect(cycles).toEqual([]);
  });
});
