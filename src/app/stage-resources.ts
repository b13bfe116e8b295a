import { availableParallelism } from 'node:os';
import { ThreadPool } from '../runtime/index.ts';
import { AlertFileWriter } from '../stages/alerter/index.ts';
import { DGA_SCORE_TASK_MODULE } from '../stages/detector/index.ts';

/**
 * What the stages of one process share and what must be closed when they stop: the alert file
 * writer (one per file and process, so two alerters never append the same id twice) and the thread
 * pool that scores DGA domains off the event loop (one for all detectors of the process).
 */
export class StageResources {
  readonly #files = new Map<string, Promise<AlertFileWriter>>();
  #pool: ThreadPool | undefined;

  /** @param poolSize threads of the scoring pool; default min(2, cores). */
  constructor(private readonly poolSize?: number) {}

  alertFile(path: string): Promise<AlertFileWriter> {
    let file = this.#files.get(path);
    if (!file) {
      file = AlertFileWriter.open(path);
      this.#files.set(path, file);
    }
    return file;
  }

  scoringPool(): ThreadPool {
    this.#pool ??= new ThreadPool({
      module: DGA_SCORE_TASK_MODULE,
      size: this.poolSize ?? Math.min(2, availableParallelism()),
    });
    return this.#pool;
  }

  async close(): Promise<void> {
    const files = await Promise.allSettled([...this.#files.values()]);
    await Promise.all(files.flatMap((f) => (f.status === 'fulfilled' ? [f.value.close()] : [])));
    await this.#pool?.close();
  }
}
