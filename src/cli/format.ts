import { relative } from 'node:path';

/** A path as short as it can be shown: relative to the current directory when inside it. */
export function showPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
