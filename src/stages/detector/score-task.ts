import { readFileSync } from 'node:fs';
import { entryModule } from '../../assets/project.ts';
import { scoreNames, type DgaModel } from './model/dga-model.ts';
import { modelFromBytes } from './model/model-file.ts';

/** What the detector hands to a scoring thread: the model (by file and checksum) and the names. */
export interface ScoreTask {
  readonly modelPath: string;
  readonly checksum: string;
  readonly domains: readonly string[];
}

const models = new Map<string, DgaModel>();

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
  return scoreNames(model, task.domains);
}

/** The module to give `new ThreadPool({ module })` for the DGA detector. */
export const DGA_SCORE_TASK_MODULE: URL = entryModule('stages/detector/score-task');
