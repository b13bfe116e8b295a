import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { FEATURE_NAMES } from '../features.ts';
import { parseGbtModel, type GbtModel } from './gbt.ts';

/** The model file's SHA-256 differs from the configured `checksum`: the stage must not start. */
export class ModelChecksumError extends Error {
  override readonly name = 'ModelChecksumError';
  constructor(
    readonly path: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`model file ${path}: SHA-256 ${actual} does not match the configured checksum ${expected}`);
  }
}

/** One JSON text per model, so that the same model always has the same checksum. */
export function serializeModel(model: GbtModel): string {
  return `${JSON.stringify(model)}\n`;
}

export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Reads a model file, checks its SHA-256 against `checksum` before parsing anything, validates it
 * and checks that it was trained on this code's 44 features in this order.
 *
 * @throws {@link ModelChecksumError} naming both digests when the file is not the configured one.
 */
export async function loadDgaModel(path: string, checksum: string): Promise<GbtModel> {
  const bytes = await readFile(path);
  return modelFromBytes(path, bytes, checksum);
}

export function modelFromBytes(path: string, bytes: Buffer, checksum: string): GbtModel {
  const actual = sha256Hex(bytes);
  if (actual !== checksum.toLowerCase()) throw new ModelChecksumError(path, checksum.toLowerCase(), actual);
  const model = parseGbtModel(JSON.parse(bytes.toString('utf8')));
  const same =
    model.features.length === FEATURE_NAMES.length && model.features.every((f, i) => f === FEATURE_NAMES[i]);
  if (!same) throw new Error(`model file ${path} was trained on other features than this detector computes`);
  return model;
}
