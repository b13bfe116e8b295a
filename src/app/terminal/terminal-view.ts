import type { AlertView } from '../dashboard/alert-view.ts';
import { plainAlertLine, renderFrame, statusLine } from './render.ts';
import type { PipelineSnapshot, SnapshotSource } from './snapshot.ts';
import { ViewState, type ViewModel } from './view-model.ts';

/** Where the view writes: process.stdout, or any stream with the same shape. */
export interface ViewOutput {
  write(text: string): unknown;
  /** True on a terminal: the live view; otherwise plain log lines. */
  isTTY?: boolean;
  columns?: number;
}

export interface TerminalViewOptions {
  source: SnapshotSource;
  /** Default process.stdout. */
  out?: ViewOutput;
  /** Refresh interval of the live view and of snapshot reads; default 1000 ms. */
  intervalMs?: number;
  /** Without a terminal: a status line this often (alerts are printed as they come); default 10 s. */
  statusEveryMs?: number;
  /** A snapshot that failed (metrics endpoint or ClickHouse down): reported, and the view goes on. */
  onError?: (error: unknown) => void;
}

/** A running terminal view. */
export interface TerminalView {
  /**
   * Reads one last snapshot (every alert there is, none held back; a failed read is tried up to
   * three times), restores the terminal and returns the final state.
   */
  stop(): Promise<{ model: ViewModel | undefined; alerts: readonly AlertView[] }>;
}

const CSI = '\x1b[';
const FINAL_READ_ATTEMPTS = 3;

/**
 * Shows the pipeline while it runs. On a terminal it redraws one screen in place (the alternate
 * screen stays off, so the last frame remains visible after Ctrl-C, above the summary); elsewhere
 * it prints a status line every `statusEveryMs` and one line per alert as it arrives.
 */
export function startTerminalView(opts: TerminalViewOptions): TerminalView {
  const out = opts.out ?? process.stdout;
  const live = out.isTTY === true;
  const intervalMs = opts.intervalMs ?? 1000;
  const statusEveryMs = opts.statusEveryMs ?? 10_000;
  const state = new ViewState(Date.now());
  let lastStatusAt = Number.NEGATIVE_INFINITY;
  let lastFrameLines = 0;
  let stopped = false;
  let running: Promise<void> | undefined;

  const draw = (model: ViewModel, fresh: readonly AlertView[]) => {
    if (live) {
      const frame = renderFrame(model, Math.max(40, out.columns ?? 100));
      // Back to the frame's first line, rewrite each line, clear what a longer old frame left.
      const up = lastFrameLines > 0 ? `${CSI}${lastFrameLines}F` : '';
      out.write(`${up}${frame.map((l) => `${l}${CSI}K`).join('\n')}\n${CSI}J`);
      lastFrameLines = frame.length;
      return;
    }
    for (const a of fresh) out.write(`${plainAlertLine(a)}\n`);
    if (model.at - lastStatusAt >= statusEveryMs) {
      lastStatusAt = model.at;
      out.write(`${statusLine(model)}\n`);
    }
  };

  const once = async (final = false): Promise<void> => {
    let snap: PipelineSnapshot | undefined;
    // The last read is the view's only chance at the alerts the pipeline's end brought: a failed one
    // is tried again before the view gives up on them.
    for (let attempt = 1; snap === undefined; attempt += 1) {
      try {
        snap = await opts.source(final ? { final } : undefined);
      } catch (e) {
        opts.onError?.(e);
        if (!final || attempt >= FINAL_READ_ATTEMPTS) return;
      }
    }
    const { model, fresh } = state.push(snap);
    draw(model, fresh);
  };

  if (live) out.write(`${CSI}?25l`);
  const loop = async () => {
    while (!stopped) {
      running = once();
      await running;
      if (!stopped) await new Promise((r) => setTimeout(r, intervalMs).unref());
    }
  };
  void loop();

  return {
    async stop() {
      stopped = true;
      await running;
      await once(true);
      if (live) out.write(`${CSI}?25h`);
      else if (state.model) out.write(`${statusLine(state.model)}\n`);
      return { model: state.model, alerts: state.alerts };
    },
  };
}
