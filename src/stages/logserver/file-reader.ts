import { open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  planRead,
  splitLines,
  type FileLine,
  type FileObservation,
  type FilePosition,
} from './file-position.ts';

export interface FileRead {
  readonly lines: readonly FileLine[];
  /** Identity of the file the lines come from (their monitoring source). */
  readonly file: FileObservation;
  /** Store this with the outputs of the lines: the next read starts here. */
  readonly position: FilePosition;
}

/**
 * Reads the next complete lines of `path` after `stored` (at most `maxChunk` bytes). The only side
 * effect is reading; the caller commits `position` in the same transaction as the lines' outputs, so
 * a call replayed after an abort starts at the same offset and reads the same bytes (the file only
 * grows in place; a rotation changes the identity, which the plan checks).
 *
 * Rotation by rename: the stored identity (device and inode) is looked for under any name in the
 * file's directory (`<path>.1` first, as logrotate names it; Zeek and Suricata name rotated files
 * by time), and its rest is read before the new file at `path` is started.
 */
export async function readNextLines(
  path: string,
  stored: FilePosition | undefined,
  maxChunk: number,
): Promise<FileRead | undefined> {
  const current = await observe(path);
  const rotatedAway = stored && (!current || current.dev !== stored.dev || current.ino !== stored.ino);
  const found = rotatedAway ? await findRenamed(path, stored) : undefined;
  const rotated = found?.file;
  const plan = planRead(current, stored, rotated, maxChunk);
  if (plan.kind === 'idle') {
    // A rotated file read to its end: move on to the new file's start without reading yet.
    return current && rotatedAway && stored && !rotated
      ? { lines: [], file: current, position: { dev: current.dev, ino: current.ino, offset: 0 } }
      : undefined;
  }
  const handle = await open(plan.file === 'current' || !found ? path : found.path, 'r');
  try {
    const opened = await handle.stat();
    // Renamed between stat and open: plan again at the next call.
    if (opened.dev !== plan.identity.dev || opened.ino !== plan.identity.ino) return undefined;
    const buffer = Buffer.alloc(plan.to - plan.from);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, plan.from);
    const chunk = buffer.subarray(0, bytesRead);
    const { lines, next } = splitLines(chunk, plan.from, {
      final: plan.final && plan.from + bytesRead >= opened.size,
      full: bytesRead === maxChunk,
    });
    const file = { dev: opened.dev, ino: opened.ino, size: opened.size };
    return { lines, file, position: { dev: opened.dev, ino: opened.ino, offset: next } };
  } finally {
    await handle.close();
  }
}

/** The stored file under its new name in the same directory, if it is still there. */
async function findRenamed(
  path: string,
  stored: FilePosition,
): Promise<{ path: string; file: FileObservation } | undefined> {
  const same = (f: FileObservation | undefined) => f && f.dev === stored.dev && f.ino === stored.ino;
  const first = `${path}.1`;
  const logrotated = await observe(first);
  if (logrotated && same(logrotated)) return { path: first, file: logrotated };
  const directory = dirname(path);
  let names: string[];
  try {
    names = await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  for (const name of names) {
    if (name === basename(path) || name === basename(first)) continue;
    const candidate = join(directory, name);
    const file = await observe(candidate);
    if (same(file) && file) return { path: candidate, file };
  }
  return undefined;
}

async function observe(path: string): Promise<FileObservation | undefined> {
  try {
    const stats = await stat(path);
    return stats.isFile() ? { dev: stats.dev, ino: stats.ino, size: stats.size } : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
