import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Appends alerts to a JSON-lines file at most once each. At open it reads the ids the file already
 * holds and cuts a last line left half-written by a crash (that alert's batch never committed, so
 * it comes again). Every append is flushed to disk before it returns, so a batch whose offsets
 * commit afterwards never loses its lines; a batch replayed after an abort finds its ids and
 * writes nothing twice.
 *
 * One writer per file and process: share it between the alerters of one process.
 */
export class AlertFileWriter {
  readonly #ids = new Set<string>();
  #file: FileHandle | undefined;
  #size = 0;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(readonly path: string) {}

  static async open(path: string): Promise<AlertFileWriter> {
    const writer = new AlertFileWriter(path);
    await writer.#load();
    return writer;
  }

  /** Ids the file holds. */
  has(id: string): boolean {
    return this.#ids.has(id);
  }

  get size(): number {
    return this.#ids.size;
  }

  /** Appends the alerts whose ids the file does not hold yet; returns how many it wrote. */
  append(alerts: readonly { alert_id: string }[]): Promise<number> {
    const run = this.#queue.then(() => this.#append(alerts));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    await this.#queue;
    await this.#file?.close();
    this.#file = undefined;
  }

  async #load(): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    this.#file = await open(this.path, 'a+');
    const text = (await this.#file.readFile()).toString('utf8');
    const complete = text.lastIndexOf('\n') + 1;
    for (const line of text.slice(0, complete).split('\n')) {
      if (line.trim() === '') continue;
      try {
        const id = (JSON.parse(line) as { alert_id?: unknown }).alert_id;
        if (typeof id === 'string') this.#ids.add(id);
      } catch {
        // A foreign line (written by hand or another tool) is kept as is and holds no id.
      }
    }
    this.#size = Buffer.byteLength(text.slice(0, complete), 'utf8');
    if (complete < text.length) {
      await this.#file.truncate(this.#size);
      await this.#file.sync();
    }
  }

  async #append(alerts: readonly { alert_id: string }[]): Promise<number> {
    const file = this.#file;
    if (!file) throw new Error(`alert file ${this.path} is closed`);
    const fresh: { alert_id: string }[] = [];
    const seen = new Set<string>();
    for (const a of alerts) {
      if (this.#ids.has(a.alert_id) || seen.has(a.alert_id)) continue;
      seen.add(a.alert_id);
      fresh.push(a);
    }
    if (fresh.length === 0) return 0;
    const text = fresh.map((a) => `${JSON.stringify(a)}\n`).join('');
    try {
      await file.appendFile(text);
      await file.sync();
    } catch (e) {
      // A half-written line would glue onto the next append; cut back to the last whole line.
      await file.truncate(this.#size).catch(() => undefined);
      throw e;
    }
    this.#size += Buffer.byteLength(text, 'utf8');
    for (const a of fresh) this.#ids.add(a.alert_id);
    return fresh.length;
  }
}
