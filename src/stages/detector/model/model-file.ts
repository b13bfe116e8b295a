import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseDgaModel, type DgaModel, type DgaModelFile } from './dga-model.ts';
import { HamstringError } from '../../../errors/hamstring-error.ts';

/** The model file's SHA-256 differs from the configured `checksum`: the stage must not start. */
export class ModelChecksumError extends HamstringError {
  override readonly name = 'ModelChecksumError';
  readonly code = 'MODEL_CHECKSUM_MISMATCH';
  constructor(
    readonly path: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`model file ${path}: SHA-256 ${actual} does not match the configured checksum ${expected}`);
  }
}

/** One JSON text per model, so that the same model always has the same checksum. */
export function serializeModel(model: DgaModelFile): string {
  return `${JSON.stringify(model)}\n`;
}

export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Reads a model file, checks its SHA-256 against `checksum` before parsing anything, validates it
 * and checks that it was trained on the features this code computes, in this order.
 *
 * @throws {@link ModelChecksumError} naming both digests when the file is not the configured one.
 */
export async function loadDgaModel(path: string, checksum: string): Promise<DgaModel> {
  const bytes = await readFile(path);
  return modelFromBytes(path, bytes, checksum);
}

export function modelFromBytes(path: string, bytes: Buffer, checksum: string): DgaModel {
  const actual = sha256Hex(bytes);
  if (actual !== checksum.toLowerCase()) throw new ModelChecksumError(path, checksum.toLowerCase(), actual);
  return parseDgaModel(JSON.parse(bytes.toString('utf8')), path);
}
