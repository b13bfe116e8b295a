/**
 * Where the project's files are, the same whether this code runs from the TypeScript sources (tsx,
 * tests) or from the production bundle under `dist/` (`npm run build`, scripts/build.ts). A path
 * computed from `import.meta.url` alone breaks in the bundle, where every module's code sits in a
 * file of the bundle's, so modules ask here instead:
 * - {@link projectRoot}: the directory holding the project's package.json;
 * - {@link sourcePath}: a file of the source tree (assets the bundle does not carry: the dashboard's
 *   pages, dnstap.proto, a script run through tsx);
 * - {@link entryModule}: a module started on its own (a thread's entry), which the bundle emits as a
 *   separate entry point of the same name ({@link BUNDLE_ENTRIES}).
 *
 * This layer imports nothing of the project's.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The bundle's directory under the project root, where `npm run build` writes it. */
export const BUNDLE_DIR = 'dist';

/**
 * Set by scripts/build.ts (esbuild's `define`) to the directory the bundle was built into, relative
 * to the project root; absent from the sources.
 */
declare const HAMSTRING_BUNDLE_DIR: string | undefined;
const bundleDir: string | undefined =
  typeof HAMSTRING_BUNDLE_DIR === 'string' ? HAMSTRING_BUNDLE_DIR : undefined;

/**
 * Modules the bundle emits as entry points, by their path under `src/` without extension: the
 * command, the package's API (what a stage module imports as `hamstring`), and each module a worker
 * thread starts from (see {@link entryModule}).
 */
export const BUNDLE_ENTRIES = [
  'cli/main',
  'index',
  'runtime/thread-pool-worker',
  'stages/detector/score-task',
] as const;

export type BundleEntry = (typeof BUNDLE_ENTRIES)[number];

const here = fileURLToPath(import.meta.url);

/** True when this code runs from the bundle, false from the sources. */
export const fromBundle: boolean = bundleDir !== undefined;

/** The nearest directory above `start` holding a package.json: the project's root. */
function findRoot(start: string): string {
  for (let dir = dirname(start); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

/** Absolute path of the project root, without a trailing separator. */
export const projectRoot: string = findRoot(here);

/** Absolute path of a file or directory under `src/` (`relative` uses forward slashes). */
export function sourcePath(relative: string): string {
  return join(projectRoot, 'src', ...relative.split('/'));
}

/**
 * The URL of an entry module: `src/<name>.ts` from the sources, `dist/<name>.js` from the bundle,
 * so a thread started from either runs the same kind of code as the process that starts it.
 */
export function entryModule(name: BundleEntry): URL {
  return bundleDir !== undefined
    ? pathToFileURL(join(projectRoot, bundleDir, `${name}.js`))
    : pathToFileURL(sourcePath(`${name}.ts`));
}
