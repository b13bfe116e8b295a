import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalKafkaCluster } from '../dev/kafka-cluster.ts';
import { NetworkNamespace } from '../dev/network-namespace.ts';
import { defaultVarDir } from '../dev/paths.ts';
import { faultLines, markdownTable, type ScenarioReport } from './report.ts';
import { runScenario, type VerifyRunOptions } from './run-scenario.ts';
import type { Scenario } from './scenario.ts';
import { applicable, scenarios } from './scenarios.ts';

/** Options of {@link runVerify}: the CLI's flags. */
export interface VerifyOptions {
  /** The user's cluster; ignored when `local` is set. */
  bootstrap?: string;
  /** Start (or attach to) a local cluster of this size under var/verify/kafka-<n>. */
  local?: 1 | 3;
  /** Base port of the local cluster. Default 23092. */
  basePort?: number;
  /** Data dir of the local cluster. Default var/verify/kafka-<n>. */
  dataDir?: string;
  records: number;
  workers: number;
  /** Scenario names, or ['all']. */
  scenarios: string[];
  reportDir: string;
  soakMs?: number;
  seed?: number;
  log: (line: string) => void;
}

export const DEFAULT_VERIFY_BASE_PORT = 23092;

/** Names of the scenarios, for usage and errors. */
export const scenarioNames = (): string[] => scenarios.map((s) => s.name);

/**
 * Runs the chosen scenarios one after another and writes `<scenario>.json`, `<scenario>.md` and a
 * `summary.md` / `summary.json` to the report dir after each one. Scenarios that need a local
 * cluster of another size are skipped with a note (broker faults need `--local`).
 */
export async function runVerify(o: VerifyOptions): Promise<{ reports: ScenarioReport[]; skipped: string[] }> {
  const wanted = o.scenarios.includes('all')
    ? scenarios.filter((s) => s.name !== 'smoke')
    : o.scenarios.map((name) => {
        const s = scenarios.find((x) => x.name === name);
        if (!s) throw new Error(`unknown scenario ${name}; known: ${scenarioNames().join(', ')}, all`);
        return s;
      });
  const noNamespace = wanted.some((s) => s.workersInNamespace)
    ? NetworkNamespace.unavailableReason()
    : undefined;
  const skipReason = (s: Scenario): string | undefined =>
    !applicable(s, o.local)
      ? `needs ${s.needs}`
      : s.workersInNamespace && noNamespace !== undefined
        ? noNamespace
        : undefined;
  const skipped = wanted.flatMap((s) => {
    const why = skipReason(s);
    return why === undefined ? [] : [`${s.name} (${why})`];
  });
  const runnable = wanted.filter((s) => skipReason(s) === undefined);
  for (const s of skipped) o.log(`skipping ${s}`);
  // Ctrl-C ends the run through process.exit, whose handler kills the worker processes.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => process.exit(signal === 'SIGINT' ? 130 : 143));
  const basePort = o.basePort ?? DEFAULT_VERIFY_BASE_PORT;
  // Made before the cluster starts: its brokers listen on the namespace's host address too.
  const namespace =
    o.local !== undefined && runnable.some((s) => s.workersInNamespace)
      ? NetworkNamespace.create(basePort)
      : undefined;
  if (namespace) process.once('exit', () => namespace.remove());
  try {
    let cluster: LocalKafkaCluster | undefined;
    if (o.local !== undefined) {
      const t0 = Date.now();
      cluster = await LocalKafkaCluster.start({
        nodes: o.local,
        dataDir: o.dataDir ?? defaultVarDir(join('verify', `kafka-${o.local}`)),
        basePort,
        ...(namespace ? { namespaceListenerHost: namespace.hostAddress } : {}),
      });
      o.log(`local ${o.local}-node cluster ready at ${cluster.bootstrapServers} (${Date.now() - t0} ms)`);
    }
    const bootstrap = cluster?.bootstrapServers ?? o.bootstrap;
    if (!bootstrap) throw new Error('either --bootstrap or --local is required');
    const namespaceKafka =
      namespace && cluster
        ? {
            bootstrap: cluster.namespaceBootstrap(namespace.hostAddress),
            execPrefix: namespace.execPrefix(),
            cut: () => namespace.cut(),
            heal: () => namespace.heal(),
          }
        : undefined;
    return await runScenarios(o, runnable, skipped, bootstrap, cluster, namespaceKafka);
  } finally {
    namespace?.remove();
  }
}

async function runScenarios(
  o: VerifyOptions,
  runnable: readonly Scenario[],
  skipped: readonly string[],
  bootstrap: string,
  cluster: LocalKafkaCluster | undefined,
  namespace: VerifyRunOptions['namespace'],
): Promise<{ reports: ScenarioReport[]; skipped: string[] }> {
  mkdirSync(o.reportDir, { recursive: true });
  const reports: ScenarioReport[] = [];
  for (const s of runnable) {
    o.log(`scenario ${s.name}: ${s.description}`);
    if (cluster) await cluster.waitReady(180_000);
    const report = await runScenario(s, {
      bootstrap,
      cluster,
      records: o.records,
      workers: o.workers,
      workDir: join(o.reportDir, 'logs'),
      ...(o.seed !== undefined ? { seed: o.seed } : {}),
      ...(o.soakMs !== undefined ? { soakMs: o.soakMs } : {}),
      ...(namespace ? { namespace } : {}),
      log: o.log,
    });
    reports.push(report);
    writeFileSync(join(o.reportDir, `${s.name}.json`), `${JSON.stringify(report, nullForUndefined, 2)}\n`);
    writeFileSync(
      join(o.reportDir, `${s.name}.md`),
      [
        `# ${s.name}`,
        '',
        s.description,
        '',
        markdownTable([report]),
        '',
        '## Faults',
        '',
        ...faultLines(report),
        '',
      ].join('\n'),
    );
    writeFileSync(join(o.reportDir, 'summary.json'), `${JSON.stringify(reports, nullForUndefined, 2)}\n`);
    writeFileSync(
      join(o.reportDir, 'summary.md'),
      [
        markdownTable(reports),
        ...(skipped.length > 0 ? ['', `Skipped: ${skipped.join(', ')}`] : []),
        '',
      ].join('\n'),
    );
    o.log(`scenario ${s.name}: ${report.ok ? 'OK' : `FAILED: ${report.problems.join('; ')}`}`);
  }
  return { reports, skipped: [...skipped] };
}

/** Keeps absent numbers visible in the JSON reports (as null) instead of dropping the key. */
function nullForUndefined(_key: string, value: unknown): unknown {
  return value === undefined ? null : value;
}
