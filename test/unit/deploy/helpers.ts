import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../../src/cli/dispatch.ts';
import { commands } from '../../../src/cli/registry.ts';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const DEPLOY = `${REPO}deploy/`;

export function readRepoFile(path: string): string {
  return readFileSync(`${REPO}${path}`, 'utf8');
}

/**
 * What `hamstring <argv> --help` says: exit 0 and the command's usage only when `argv` names a
 * registered command and every option in it is one that command takes (parseArgs is strict).
 * Nothing runs: --help answers before the command does.
 */
export async function cliAccepts(argv: readonly string[]): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
  const code = await runCli([...argv, '--help'], io, commands, {});
  return { code, output: lines.join('\n') };
}

/** The image's install root; paths under it are the repository's files (deploy/Containerfile copies them). */
export const IMAGE_ROOT = '/opt/hamstring/';

/** The Containerfile's instructions of the final stage, each as [keyword, rest of the line]. */
export function containerfile(): { all: [string, string][]; final: [string, string][] } {
  const text = readRepoFile('deploy/Containerfile').replace(/\\\n/g, ' ');
  const all = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line): [string, string] => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return [keyword.toUpperCase(), rest.join(' ')];
    });
  const lastFrom = all.map(([k]) => k).lastIndexOf('FROM');
  return { all, final: all.slice(lastFrom) };
}

/** The value of the final stage's ENTRYPOINT, in exec (JSON) form. */
export function imageEntrypoint(): string[] {
  const entry = containerfile().final.find(([k]) => k === 'ENTRYPOINT');
  if (!entry) throw new Error('deploy/Containerfile has no ENTRYPOINT in its final stage');
  return JSON.parse(entry[1]) as string[];
}
