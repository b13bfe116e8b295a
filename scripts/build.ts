/**
 * The production build (`npm run build`, run by scripts/setup.sh): the command and the modules
 * worker threads start from, bundled by esbuild into `dist/` (gitignored), one file per entry of
 * BUNDLE_ENTRIES at its source path (`dist/cli/main.js`, ...) and the code they share in chunks.
 * `bin/hamstring` runs the bundle when it is newer than every source file, and the sources through
 * tsx otherwise: a stage started from the bundle has no transpiler loaded and no esbuild service
 * beside it (bench/README.md, memory benchmark, measured what that saves).
 *
 * Packages stay outside the bundle, loaded from node_modules as before: the Kafka client and LMDB
 * are native addons, and the word lists are read with createRequire at run time.
 *
 *   node --import tsx scripts/build.ts [--outdir dist]
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { BUNDLE_DIR, BUNDLE_ENTRIES, projectRoot } from '../src/assets/project.ts';

/**
 * Builds the bundle into `outdir` (relative to the project root, which the bundle finds its
 * package.json from), replacing what was there.
 */
export async function buildBundle(outdir: string = BUNDLE_DIR): Promise<void> {
  const out = join(projectRoot, outdir);
  rmSync(out, { recursive: true, force: true });
  await build({
    absWorkingDir: projectRoot,
    entryPoints: BUNDLE_ENTRIES.map((name) => ({ in: `src/${name}.ts`, out: name })),
    outdir: out,
    bundle: true,
    // Chunks: code shared by the entries is loaded once per thread, and each command's modules
    // (the CLI imports them on demand) only when the command runs.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    // Stack traces name the source files with NODE_OPTIONS=--enable-source-maps.
    sourcemap: 'linked',
    logLevel: 'warning',
    // How src/assets/project.ts knows it runs from a bundle, and where its entry modules are.
    define: { HAMSTRING_BUNDLE_DIR: JSON.stringify(outdir) },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { outdir: { type: 'string', default: BUNDLE_DIR } } });
  await buildBundle(values.outdir);
}
