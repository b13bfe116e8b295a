/**
 * test/durations.tsv: how long each integration file took in the last full run that was recorded
 * (`npm run test:integration -- --record-durations`). Committed: the runner starts the longest
 * files first from it, and a reader sees where the suite's time goes without running it. A normal
 * run only reads it, so a run (or a run of a few files) never leaves the tree dirty; recording is
 * a deliberate act, done after a full run on a quiet machine.
 *
 * Format: `# ...` comment lines, then `seconds<TAB>lane<TAB>file` per line, longest first.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const DURATIONS_FILE = 'test/durations.tsv';

export interface Duration {
  file: string;
  lane: string;
  ms: number;
}

/** The recorded durations by file (empty when the file is missing or unreadable). */
export function readDurations(root: string): Map<string, number> {
  const out = new Map<string, number>();
  let text: string;
  try {
    text = readFileSync(join(root, DURATIONS_FILE), 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [seconds, , file] = line.split('\t');
    if (file && Number.isFinite(Number(seconds))) out.set(file, Number(seconds) * 1000);
  }
  return out;
}

/**
 * Writes `runs` over the recorded table: files of this run get their new duration, files not run
 * keep theirs, files that no longer exist are dropped.
 */
export function recordDurations(root: string, runs: readonly Duration[], note: string): void {
  const lanes = new Map<string, string>();
  const merged = new Map<string, number>();
  let text = '';
  try {
    text = readFileSync(join(root, DURATIONS_FILE), 'utf8');
  } catch {
    // First recording.
  }
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [seconds, lane, file] = line.split('\t');
    if (!file || !lane || !existsSync(join(root, file))) continue;
    merged.set(file, Number(seconds) * 1000);
    lanes.set(file, lane);
  }
  for (const run of runs) {
    merged.set(run.file, run.ms);
    lanes.set(run.file, run.lane);
  }
  const rows = [...merged].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  const lines = [
    '# Integration file durations, longest first (scripts/run-integration-tests.ts --record-durations).',
    `# ${note}; ${rows.length} files, ${(total / 1000).toFixed(1)} s in all.`,
    '# seconds\tlane\tfile',
    ...rows.map(([file, ms]) => `${(ms / 1000).toFixed(1)}\t${lanes.get(file) ?? 'shared'}\t${file}`),
  ];
  writeFileSync(join(root, DURATIONS_FILE), `${lines.join('\n')}\n`);
}
