import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => resolve(e.parentPath, e.name));
}

/** The src/ files a file imports or re-exports from (type-only imports included: they are dependencies too). */
function importsOf(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const out: string[] = [];
  for (const st of sf.statements) {
    if (!ts.isImportDeclaration(st) && !ts.isExportDeclaration(st)) continue;
    const spec = st.moduleSpecifier;
    if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) continue;
    const target = resolve(dirname(file), spec.text);
    if (existsSync(target)) out.push(target);
  }
  return out;
}

/** Strongly connected components of more than one file (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('no file under src/ imports itself through other files', () => {
  const files = sources('src');
  assert.ok(files.length > 100, 'the sources were found');
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  const names = cycles(graph).map((c) => c.map((f) => relative('.', f)).join(' <-> '));
  assert.deepEqual(names, []);
});

test('the check finds a cycle', () => {
  const [a, b, c] = ['a.ts', 'b.ts', 'c.ts'].map((f) => join('/x', f));
  assert.equal(
    cycles(
      new Map([
        [a!, [b!]],
        [b!, [c!]],
        [c!, [a!]],
      ]),
    ).length,
    1,
  );
  assert.equal(
    cycles(
      new Map([
        [a!, [b!]],
        [b!, [c!]],
        [c!, []],
      ]),
    ).length,
    0,
  );
});
