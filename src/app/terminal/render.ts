import type { AlertCondition } from '../../runtime/alert-conditions.ts';
import type { AlertView } from '../dashboard/alert-view.ts';
import type { StageRow, ViewModel } from './view-model.ts';

const ESC = '\x1b[';
const style = {
  bold: (s: string) => `${ESC}1m${s}${ESC}22m`,
  dim: (s: string) => `${ESC}2m${s}${ESC}22m`,
  red: (s: string) => `${ESC}31m${s}${ESC}39m`,
  green: (s: string) => `${ESC}32m${s}${ESC}39m`,
};
const plain = {
  bold: (s: string) => s,
  dim: (s: string) => s,
  red: (s: string) => s,
  green: (s: string) => s,
};

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const rate = (n: number) => (n >= 100 ? int(n) : n.toFixed(1));
const pad = (s: string, n: number) => (s.length >= n ? s.slice(0, n) : s + ' '.repeat(n - s.length));
const padL = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);
const short = (stage: string) => stage.replace(/^[a-z_]+\./, '');

export function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const hh = String(Math.floor(s / 3600)).padStart(2, '0');
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  return `${hh}:${mm}:${String(s % 60).padStart(2, '0')}`;
}

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/**
 * What found the alert: the family (or kind) the detector named and the detector, or the detector
 * alone (the DGA model tells DGA names from benign ones, not one family from another).
 */
export function foundBy(a: Pick<AlertView, 'family' | 'detector'>): string {
  if (a.family && a.detector) return `${a.family} (${a.detector})`;
  return a.family || a.detector || '-';
}

/** An alert in one line: time, host, score, family and/or detector, as many domains as fit. */
export function alertLine(a: AlertView, width: number, color = true): string {
  const s = color ? style : plain;
  const rest = `  ${a.score.toFixed(3)}  ${pad(foundBy(a), 26)}  `;
  const visible = 8 + 2 + 15 + rest.length;
  const domains = a.domains.join(', ');
  const room = Math.max(0, width - visible);
  const shown = domains.length > room ? `${domains.slice(0, Math.max(0, room - 1))}…` : domains;
  return `${clock(a.time)}  ${s.red(pad(a.host, 15))}${rest}${shown}`;
}

/**
 * Short names of the runtime's per-stage alert conditions (all but `partition_unowned`, as on the
 * dashboard), so a stage row fits 80 columns; typed so that a new condition needs its label.
 */
const CONDITION_LABELS: Readonly<Record<string, string>> = {
  max_poll_exceeded_or_unknown_member: 'max-poll/member',
  repeated_recovery_after_revoke: 'recovery-loop',
  aborts_while_lag_grows: 'aborts+lag-grows',
  no_commit_while_input_arrives: 'no-commit',
  records_below_commit: 'below-commit',
  not_ready: 'NOT READY',
} satisfies Record<Exclude<AlertCondition, 'partition_unowned'> | 'not_ready', string>;

function stageLine(r: StageRow, color: boolean): string {
  const s = color ? style : plain;
  const labels = r.conditions.map((c) => CONDITION_LABELS[c] ?? c);
  const cond = labels.length === 0 ? s.green('ok') : s.red(labels.join(', '));
  return [
    pad(short(r.stage), 12),
    padL(String(r.instances), 4),
    padL(rate(r.recordsPerSec), 10),
    padL(int(r.lag), 8),
    padL(int(r.commits), 9),
    padL(int(r.aborts), 7),
    padL(int(r.recoveries), 7),
    `  ${cond}`,
  ].join('');
}

/** The live view's lines for a terminal `width` columns wide (ANSI colours, no cursor control). */
export function renderFrame(m: ViewModel, width: number): string[] {
  const s = style;
  const open = m.openBatches === undefined ? '' : `   open batches ${s.bold(int(m.openBatches))}`;
  const lines = [
    `${s.bold('HAMSTRING')}  running ${elapsed(m.at - m.startedAt)}   lines in ${s.bold(int(m.linesIn))} (${rate(m.linesPerSec)}/s)${open}   alerts ${m.alertCount > 0 ? s.red(s.bold(int(m.alertCount))) : '0'}`,
    '',
    s.dim(
      [
        pad('stage', 12),
        padL('inst', 4),
        padL('records/s', 10),
        padL('lag', 8),
        padL('commits', 9),
        padL('aborts', 7),
        padL('recov.', 7),
        '  alert conditions',
      ].join(''),
    ),
    ...(m.stages.length === 0 ? [s.dim('(no worker metrics yet)')] : m.stages.map((r) => stageLine(r, true))),
    '',
    s.dim(
      `alerts (latest ${m.recentAlerts.length} of ${m.alertCount}, newest last): time, host, score, found by (family, detector), domains`,
    ),
    ...(m.recentAlerts.length === 0 ? [s.dim('(none yet)')] : m.recentAlerts.map((a) => alertLine(a, width))),
    '',
    s.dim('Ctrl-C stops the pipeline and prints the summary'),
  ];
  return lines.map((l) => truncateVisible(l, width));
}

/** Cuts a line to `width` visible characters, keeping ANSI sequences whole. */
export function truncateVisible(line: string, width: number): string {
  let visible = 0;
  let out = '';
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\x1b') {
      const end = line.indexOf('m', i);
      if (end !== -1) {
        out += line.slice(i, end + 1);
        i = end;
        continue;
      }
    }
    if (visible >= width) continue;
    out += line[i];
    visible += 1;
  }
  return out;
}

/** The periodic status line when stdout is not a terminal (a log file, a pipe, CI). */
export function statusLine(m: ViewModel): string {
  const stages = m.stages
    .map(
      (r) =>
        `${short(r.stage)} ${rate(r.recordsPerSec)}/s lag ${int(r.lag)}${r.conditions.length ? ` [${r.conditions.join(',')}]` : ''}`,
    )
    .join(' | ');
  const sum = (pick: (r: StageRow) => number) => m.stages.reduce((a, r) => a + pick(r), 0);
  const open = m.openBatches === undefined ? '' : ` open_batches=${m.openBatches}`;
  return `[hamstring] ${elapsed(m.at - m.startedAt)} lines_in=${m.linesIn} (${rate(m.linesPerSec)}/s)${open} commits=${sum((r) => r.commits)} aborts=${sum((r) => r.aborts)} recoveries=${sum((r) => r.recoveries)} alerts=${m.alertCount} | ${stages}`;
}

/**
 * One alert as a log line: `key=value` pairs, a value with spaces (the DGA detector's
 * `hash DGA (87 %)`) in double quotes, so a reader can split the line on spaces.
 */
export function plainAlertLine(a: AlertView): string {
  const family = a.family ? ` family=${/\s/.test(a.family) ? JSON.stringify(a.family) : a.family}` : '';
  return `[hamstring] ALERT host=${a.host} score=${a.score.toFixed(3)}${family} detector=${a.detector || '-'} domains=${a.domains.slice(0, 5).join(',')}`;
}
