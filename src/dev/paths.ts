import { isAbsolute, resolve } from 'node:path';
import { projectRoot } from '../assets/project.ts';

export { projectRoot };

/**
 * Resolves a data directory: absolute paths stay, relative ones are taken from the current
 * directory (what a user typed on the command line means).
 */
export function resolveDataDir(dir: string): string {
  return isAbsolute(dir) ? dir : resolve(process.cwd(), dir);
}

/** A default data directory under `<projectRoot>/var/`, so it does not depend on the current directory. */
export function defaultVarDir(name: string): string {
  return resolve(projectRoot, 'var', name);
}
