import type { DashboardData } from '../dashboard/dashboard-data.ts';

/** The traffic generator's truth: which hosts it infected, and with what (DGA family, tunnel, ...). */
export interface GroundTruth {
  infected: ReadonlyMap<string, string>;
}

/** An alert as far as the summary cares. */
export interface AlertedHost {
  host: string;
  family?: string;
}

export interface RunSummaryInput {
  linesIn: number;
  batches: number;
  suspiciousBatches: number;
  alerts: readonly AlertedHost[];
  truth: GroundTruth;
}

export interface RunSummary {
  linesIn: number;
  batches: number;
  suspiciousBatches: number;
  alerts: number;
  /** Infected hosts with at least one alert: what they had and the families the alerts named. */
  found: { host: string; infectedWith: string; alerts: number; familiesReported: string[] }[];
  /** Infected hosts without any alert. */
  missed: { host: string; infectedWith: string }[];
  /** Alerted hosts the generator never infected. */
  falselyAccused: { host: string; alerts: number }[];
}

/** Compares the alerts with the truth, per host (a host is found by any alert naming it). */
export function summarizeRun(input: RunSummaryInput): RunSummary {
  const perHost = new Map<string, { alerts: number; families: Set<string> }>();
  for (const a of input.alerts) {
    const entry = perHost.get(a.host) ?? { alerts: 0, families: new Set<string>() };
    entry.alerts += 1;
    if (a.family) entry.families.add(a.family);
    perHost.set(a.host, entry);
  }
  const byHost = (x: { host: string }, y: { host: string }) =>
    x.host.localeCompare(y.host, 'en', { numeric: true });
  const found: RunSummary['found'] = [];
  const missed: RunSummary['missed'] = [];
  for (const [host, infectedWith] of input.truth.infected) {
    const hit = perHost.get(host);
    if (hit)
      found.push({ host, infectedWith, alerts: hit.alerts, familiesReported: [...hit.families].sort() });
    else missed.push({ host, infectedWith });
  }
  const falselyAccused = [...perHost]
    .filter(([host]) => !input.truth.infected.has(host))
    .map(([host, v]) => ({ host, alerts: v.alerts }));
  return {
    linesIn: input.linesIn,
    batches: input.batches,
    suspiciousBatches: input.suspiciousBatches,
    alerts: input.alerts.length,
    found: found.sort(byHost),
    missed: missed.sort(byHost),
    falselyAccused: falselyAccused.sort(byHost),
  };
}

/** The summary as printed at the end of a run. */
export function formatSummary(s: RunSummary): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const infected = s.found.length + s.missed.length;
  const lines = [
    'HAMSTRING run summary',
    `  lines in            ${n(s.linesIn)}`,
    `  batches             ${n(s.batches)}`,
    `  suspicious batches  ${n(s.suspiciousBatches)}`,
    `  alerts              ${n(s.alerts)}`,
    `  infected hosts found    ${s.found.length} of ${infected}`,
    ...s.found.map(
      (f) =>
        `    ${f.host.padEnd(15)} ${f.infectedWith.padEnd(14)} ${n(f.alerts)} alert(s)${f.familiesReported.length ? `, reported as ${f.familiesReported.join(', ')}` : ''}`,
    ),
    `  infected hosts missed   ${s.missed.length}`,
    ...s.missed.map((m) => `    ${m.host.padEnd(15)} ${m.infectedWith}`),
    `  hosts falsely accused   ${s.falselyAccused.length}`,
    ...s.falselyAccused.map((f) => `    ${f.host.padEnd(15)} ${n(f.alerts)} alert(s)`),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * The summary from the monitoring tables: batch and suspicious-batch counts and every alert from
 * ClickHouse, lines in from the caller (the generator knows what it sent; default: ClickHouse's
 * `server_logs`). Call it after the pipeline drained, so late alerts count. `since` (epoch ms)
 * keeps to one run: the tables also hold earlier runs, whose infected hosts another seed or host
 * count may make benign, so their alerts would read as false accusations.
 */
export async function collectRunSummary(opts: {
  data: DashboardData;
  truth: GroundTruth;
  linesIn?: number;
  maxAlerts?: number;
  since?: number;
}): Promise<RunSummary> {
  const totals = await opts.data.totals(opts.since);
  const alerts = await opts.data.alerts({
    limit: opts.maxAlerts ?? 100_000,
    ...(opts.since !== undefined ? { since: opts.since } : {}),
  });
  return summarizeRun({
    linesIn: opts.linesIn ?? totals.linesIn,
    batches: totals.batches,
    suspiciousBatches: totals.suspiciousBatches,
    alerts,
    truth: opts.truth,
  });
}
