import { readFileSync } from 'node:fs';
import { domainFeatures } from './features.ts';
import { gbtProbability, type GbtModel } from './model/gbt.ts';
import { modelFromBytes } from './model/model-file.ts';

/** What the detector hands to a scoring thread: the model (by file and checksum) and the names. */
export interface ScoreTask {
  readonly modelPath: string;
  readonly checksum: string;
  readonly domains: readonly string[];
}

/** Malicious probability of each name: features, then the tree ensemble. */
export function scoreDomains(model: GbtModel, domains: readonly string[]): number[] {
  return domains.map((d) => gbtProbability(model, domainFeatures(d)));
}

const models = new Map<string, GbtModel>();

/**
 * The ThreadPool task (default export): each thread loads and checks the model once, then scores
 * batches of names off the event loop.
 */
export default function scoreTask(task: ScoreTask): number[] {
  const key = `${task.modelPath}\u0000${task.checksum}`;
  let model = models.get(key);
  if (!model) {
    model = modelFromBytes(task.modelPath, readFileSync(task.modelPath), task.checksum);
    models.set(key, model);
  }
  return scoreDomains(model, task.domains);
}

/** The module to give `new ThreadPool({ module })` for the DGA detector. */
export const DGA_SCORE_TASK_MODULE = new URL(import.meta.url);
