import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { z } from 'zod';

/**
 * Reads a JSON state file; undefined when it does not exist. A file that does not parse is an
 * error naming the file, because silently ignoring it could start a second server on the same data.
 */
export function readStateFile<S extends z.ZodType>(path: string, schema: S): z.infer<S> | undefined {
  if (!existsSync(path)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`state file ${path} is not valid JSON (${(error as Error).message}); remove it`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`state file ${path} has an unexpected shape; remove it`);
  return parsed.data;
}

/** Writes through a temporary file and rename, so a reader in another process never sees half a file. */
export function writeStateFile(path: string, value: unknown): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, path);
}

export function removeStateFile(path: string): void {
  rmSync(path, { force: true });
}
