/**
 * Sends generated lines when their event time comes: a line of event time `atMs` is due `atMs -
 * startMs` after the pacer began. `stop()` ends a wait at once, so a stopping feed does not sit
 * out the gap to its next line.
 */
export class Pacer {
  readonly #began = Date.now();
  #wake: (() => void) | undefined;

  constructor(private readonly startMs: number) {}

  /** Resolves when the line of event time `atMs` is due (at once when it already is). */
  async due(atMs: number): Promise<void> {
    const wait = this.#began + (atMs - this.startMs) - Date.now();
    if (wait <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, wait);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Ends the current wait. */
  stop(): void {
    this.#wake?.();
  }
}
