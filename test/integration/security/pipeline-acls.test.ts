import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { KafkaSecurity } from '../../../src/config/index.ts';
import { agentAcls, renderAclCommands, stageAcls } from '../../../src/app/acl-plan.ts';
import { buildComponentStage } from '../../../src/app/builtin-stages.ts';
import { StageResources } from '../../../src/app/stage-resources.ts';
import { createStageTopics } from '../../../src/app/stage-topics.ts';
import { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { createKafkaCertificates } from '../../../src/dev/kafka-tls.ts';
import { defaultVarDir } from '../../../src/dev/paths.ts';
import { useKafkaSecurity } from '../../../src/kafka/security.ts';
import { ensureMonitoringTopics } from '../../../src/monitoring/topics.ts';
import type { Stage } from '../../../src/runtime/index.ts';
import { changelogTopic } from '../../../src/runtime/state/changelog-topics.ts';
import { decodeOutgoingAlert } from '../../../src/stages/alerter/index.ts';
import { linesOf } from '../../../src/stages/line-frames.ts';
import { decodeBatch } from '../../../src/stages/messages.ts';
import { pipelineComponents, type PipelineComponent } from '../../../src/stages/pipeline-components.ts';
import { generateTraffic } from '../../../src/traffic/index.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { applyAcls } from '../../support/acl/apply-acls.ts';
import { exited } from '../../support/spawn-worker.ts';
import {
  clickhouseNumber,
  pipelineTestConfig,
  pollUntil,
  produceLines,
  readUntil,
} from '../pipeline/support.ts';

/**
 * The whole pipeline under exactly the ACLs `acl-plan` prints, on a broker with SASL_SSL/SCRAM and
 * the StandardAuthorizer: each component is a `hamstring run` (or `hamstring monitoring`) process
 * of its own, logged in as a SCRAM user of its own that is no super user and holds only its plan.
 * Then one planned ACL at a time is removed while the pipeline runs: the component that needs it
 * must stop by itself, naming principal, operation and resource, and once the ACL is back and the
 * component restarted, every output topic (read_committed) holds each line exactly once.
 * Ports 60 above the shared test broker's (kafka-security.test.ts takes +50).
 */
const BASE_PORT = Number(process.env.HAMSTRING_TEST_KAFKA_PORT ?? 21092) + 60;
const dataDir = defaultVarDir(`test-kafka-acl-pipeline-${BASE_PORT}`);
const ADMIN_PASSWORD = 'admin-Acl-Pipeline-1';
const password = (user: string) => `${user}-Scram-Secret-7`;
/** One SCRAM user per component, named for its kind (the config below has one of each). */
const USERS = ['logserver', 'collector', 'prefilter', 'inspector', 'detector', 'alerter', 'agent'];

let cluster: LocalKafkaCluster;
let caFile: string;
let configPath: string;
let database: string;
let clickhouseUrl: string;
const resources = new StageResources();
/** The stage of each component (names of topics, group, stores) as the workers build it. */
const stages = new Map<string, { component: PipelineComponent; stage: Stage }>();
const running = new Map<string, Proc>();

interface Proc {
  child: ChildProcess;
  lines: string[];
}

const scram = (user: string, pw: string): KafkaSecurity => ({
  protocol: 'SASL_SSL',
  verifyHostname: true,
  caFile,
  sasl: { mechanism: 'SCRAM-SHA-256', username: user, password: pw },
});

before(async () => {
  // Topics of an earlier run of this file would count against this run's lines.
  rmSync(dataDir, { recursive: true, force: true });
  const certs = createKafkaCertificates(join(dataDir, 'certs'));
  caFile = certs.caCert;
  cluster = await LocalKafkaCluster.start({
    nodes: 1,
    dataDir,
    basePort: BASE_PORT,
    heapMb: 384,
    security: {
      certificates: certs,
      users: [
        { name: 'admin', password: ADMIN_PASSWORD },
        ...USERS.map((name) => ({ name, password: password(name) })),
      ],
      acls: { superUsers: ['User:admin'] },
    },
  });
  clickhouseUrl = (await testClickHouse()).url;
  database = `acl_pipeline_${Date.now()}`;
  const made = pipelineTestConfig({
    bootstrap: cluster.saslSslBootstrap,
    clickhousePort: Number(new URL(clickhouseUrl).port),
    edit: (tree) => {
      type Entry = Record<string, unknown>;
      const p = tree.pipeline as { log_filtering: Entry[]; data_inspection: Entry[]; data_analysis: Entry[] };
      // One component of each kind: the DGA branch. NoInspector sends every batch on whole, so each
      // stage's output can be counted line by line.
      p.log_filtering = p.log_filtering.filter((f) => f.name === 'dga_prefilter');
      p.data_inspection = p.data_inspection
        .filter((i) => i.name === 'dga_inspector')
        .map((i) => ({ ...i, inspector_module_name: 'no_inspector', inspector_class_name: 'NoInspector' }));
      // Every NXDOMAIN lookup warns and every warning alerts (once per host and window): a few
      // hundred lines give alerts to count, whatever the model thinks of their names. One rule
      // (a weak rule must lie below the threshold).
      p.data_analysis = p.data_analysis
        .filter((d) => d.name === 'dga_detector')
        .map(({ weak_warnings: _weak, ...d }) => ({ ...d, min_warnings: 1, threshold: 0.01 }));
      const env = tree.environment as Record<string, Entry> & { monitoring: { clickhouse_server: Entry } };
      env.kafka_security = {
        protocol: 'SASL_SSL',
        ca_file: caFile,
        // The username and password come from each process's environment (KAFKA_SASL_*).
        sasl: { mechanism: 'SCRAM-SHA-256', username: 'nobody' },
      };
      // A denial must surface within seconds, not the shipped 30.
      env.kafka_producer = { ...env.kafka_producer, transaction_api_timeout_seconds: 5 };
      env.monitoring.clickhouse_server.database = database;
    },
  });
  configPath = made.path;
  loaded = made.config;
  useKafkaSecurity(scram('admin', ADMIN_PASSWORD));
  for (const component of pipelineComponents(made.config)) {
    const stage = await buildComponentStage(made.config, component.kind, {
      component: component.name,
      resources,
    });
    stages.set(component.kind, { component, stage });
  }
  // As `hamstring up` does, as an operator: the stages' topics and the monitoring topics.
  await createStageTopics(
    made.config,
    [...stages.values()].map((s) => s.stage),
    { partitions: 2 },
  );
  await ensureMonitoringTopics(cluster.saslSslBootstrap, { partitions: 2 });
});

after(async () => {
  for (const p of running.values()) p.child.kill('SIGKILL');
  await Promise.all([...running.values()].map((p) => exited(p.child)));
  await resources.close();
  useKafkaSecurity({ protocol: 'PLAINTEXT', verifyHostname: true });
  await cluster?.stop();
  if (clickhouseUrl !== undefined)
    await fetch(clickhouseUrl, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` });
});

/** The plan of one component, as `hamstring acl-plan <kind> --name <component> --principal User:<kind>` prints it. */
function planOf(kind: string): string {
  const principal = `User:${kind}`;
  if (kind === 'agent') return renderAclCommands(agentAcls(principal), cluster.saslSslBootstrap).join('\n');
  const s = stages.get(kind);
  assert.ok(s, `a ${kind} is configured`);
  return renderAclCommands(stageAcls(configOf(), s.stage, principal), cluster.saslSslBootstrap).join('\n');
}

let loaded: ReturnType<typeof pipelineTestConfig>['config'] | undefined;
function configOf() {
  if (loaded === undefined) throw new Error('config not loaded');
  return loaded;
}

/** Starts the component's process as its own SCRAM user; it must not be running already. */
function start(kind: string): Proc {
  const args =
    kind === 'agent'
      ? ['monitoring', 'run', '--config', configPath, '--no-create-topics', '--database', database]
      : ['run', kind, '--name', stages.get(kind)?.component.name ?? kind, '--config', configPath];
  const child = spawn(process.execPath, ['bin/hamstring.js', ...args], {
    env: {
      ...process.env,
      UV_THREADPOOL_SIZE: '16',
      KAFKA_SASL_USERNAME: kind,
      KAFKA_SASL_PASSWORD: password(kind),
      HAMSTRING_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const proc: Proc = { child, lines: [] };
  createInterface({ input: child.stdout }).on('line', (l) => proc.lines.push(l));
  createInterface({ input: child.stderr }).on('line', (l) => proc.lines.push(l));
  running.set(kind, proc);
  return proc;
}

function stageOf(kind: string): Stage {
  const s = stages.get(kind);
  assert.ok(s, `a ${kind} is configured`);
  return s.stage;
}

/** The one planned ACL of `kind` whose command contains `pattern`. */
function planned(kind: string, pattern: string): string {
  const found = planOf(kind)
    .split('\n')
    .filter((l) => l.startsWith('kafka-acls.sh') && l.includes(pattern));
  assert.equal(found.length, 1, `one planned ACL of ${kind} has ${pattern}`);
  return found.join('');
}

/** What was fed so far, and what each stage must therefore have written exactly once. */
const fed = { lines: 0, valid: 0, nxdomain: 0, garbage: 0 };
let round = 0;

/** A few hundred generated lines (some hosts DGA-infected) and one line no collector accepts. */
async function feed(): Promise<void> {
  round += 1;
  const traffic = generateTraffic({
    seed: 100 + round,
    rate: 100,
    durationSeconds: 4,
    // Half the hosts infected: every round has DGA lookups (NXDOMAIN) for the detector to alert on.
    hosts: 8,
    startMs: Date.now() - 60_000 + round * 5_000,
  });
  const good = [...traffic.lines()];
  const lines = [...good.map((l) => l.line), 'not json at all'];
  await produceLines(cluster.saslSslBootstrap, stageOf('logserver').inputTopics[0] ?? '', lines);
  fed.lines += lines.length;
  fed.valid += good.length;
  fed.nxdomain += good.filter(
    (l) => (JSON.parse(l.line) as { status_code?: string }).status_code === 'NXDOMAIN',
  ).length;
}

const GARBAGE = '{"not":"a batch"}';

/** A record the prefilter cannot decode: it is dead-lettered to its input's dead-letter topic. */
async function feedGarbage(): Promise<void> {
  await produceLines(cluster.saslSslBootstrap, stageOf('prefilter').inputTopics[0] ?? '', [
    '{"not":"a batch"}',
  ]);
  fed.garbage += 1;
}

interface LineCount {
  /** Lines of the topic's batches, context lines carried over from an earlier batch left out. */
  lines: number;
  distinct: number;
}

const all = (topic: string) => readUntil(cluster.saslSslBootstrap, topic, () => true, 30_000);

async function batchLines(topic: string): Promise<LineCount> {
  const ids: string[] = [];
  for (const r of await all(topic)) {
    // The records feedGarbage wrote beside the collector's batches.
    if (r.value?.toString() === GARBAGE) continue;
    const batch = decodeBatch(r.value);
    const context = new Set(batch.context_logline_ids ?? []);
    ids.push(...batch.data.map((l) => l.logline_id).filter((id) => !context.has(id)));
  }
  return { lines: ids.length, distinct: new Set(ids).size };
}

/** Read_committed, every hop of the pipeline. */
async function tally() {
  const alerts = (await all(configOf().pipeline.alerting.external_kafka_topic)).map(
    (r) => decodeOutgoingAlert(r.value).alert_id,
  );
  const detected = await all(stageOf('alerter').inputTopics[0] ?? '');
  return {
    // The lines the logserver forwarded, a frame's one by one.
    logserver: (await all(stageOf('collector').inputTopics[0] ?? '')).flatMap((r) => linesOf(r).lines).length,
    collector: await batchLines(stageOf('prefilter').inputTopics[0] ?? ''),
    prefilter: await batchLines(stageOf('inspector').inputTopics[0] ?? ''),
    inspector: await batchLines(stageOf('detector').inputTopics[0] ?? ''),
    detector: { alerts: detected.length, distinct: new Set(detected.map((r) => r.value?.toString())).size },
    alerter: { alerts: alerts.length, distinct: new Set(alerts).size },
    deadLetters: (await all(`${stageOf('prefilter').inputTopics[0] ?? ''}.DLT`)).length,
  };
}
type Tally = Awaited<ReturnType<typeof tally>>;

/** Each line once at every hop; each alert of the detector once through the alerter. */
function exact(t: Tally): boolean {
  const once = (c: LineCount, n: number) => c.lines === n && c.distinct === n;
  return (
    t.logserver === fed.lines &&
    once(t.collector, fed.valid) &&
    once(t.prefilter, fed.nxdomain) &&
    once(t.inspector, fed.nxdomain) &&
    t.detector.alerts > 0 &&
    t.detector.distinct === t.detector.alerts &&
    t.alerter.alerts === t.detector.alerts &&
    t.alerter.distinct === t.alerter.alerts &&
    t.deadLetters === fed.garbage
  );
}

async function assertExact(what: string): Promise<Tally> {
  // Three minutes: on a loaded 2-core host the seven SASL_SSL clients lost the broker for 20-30 s
  // at the start (reconnects in their logs) and the detector was assigned its partitions only as
  // 90 s ran out, twice in one day's clean-clone runs.
  const t = await pollUntil(tally, exact, 180_000);
  assert.ok(exact(t), `${what}: fed ${JSON.stringify(fed)}, read ${JSON.stringify(t)}\n${describeRunning()}`);
  return t;
}

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `User:<kind> may not <operation> on <type> ..., <name>...`: the principal, the operation and the
 * resource (among the others the broker may have refused with it, when it does not say which).
 */
function refused(kind: string, operation: string, type: string, name: string): RegExp {
  return new RegExp(
    `User:${kind} may not ${operation} (or DESCRIBE )?on ${type} ([^ :]+, )*${escaped(name)}`,
  );
}

function describeRunning(): string {
  return [...running.entries()]
    .map(([k, p]) => `${k}: exit ${p.child.exitCode ?? '-'} ${p.lines.slice(-3).join(' | ').slice(-1500)}`)
    .join('\n');
}

test('the six stages and the monitoring agent, each as its own SCRAM user with exactly its acl-plan, run the pipeline; removing one planned ACL stops the component that needs it, naming it, and after it is restored every hop holds each line once', async () => {
  // No component is a super user: each gets its own plan and nothing else.
  const began = Date.now();
  await applyAcls(cluster.bootstrapServers, USERS.map(planOf).join('\n'), 'add');
  for (const kind of USERS) start(kind);
  await feed();
  await feedGarbage();
  await assertExact('the pipeline under its planned ACLs');
  console.log(`pipeline under its plan: every hop exact ${Date.now() - began} ms after the start`);
  // The readers that only assign (restore, delivery attempts) look up their group's coordinator:
  // a plan without DESCRIBE on their groups left the attempt store warning at every fetch.
  const underPlan = [...running.values()].flatMap((p) => p.lines).join('\n');
  assert.doesNotMatch(underPlan, /authorization failed|AUTHORIZATION_FAILED/i, 'no refusal under the plan');

  const changelog = changelogTopic(
    stageOf('collector').name,
    Object.keys(stageOf('collector').stores ?? {})[0] ?? '',
  );
  const dlt = `${stageOf('prefilter').inputTopics[0] ?? ''}.DLT`;
  const attempts = configOf().environment.record_errors.delivery_attempts_topic;
  const detectorIds = `${stageOf('detector').name}-`;
  const logged = stageOf('collector').inputTopics[0] ?? '';
  const detected = stageOf('alerter').inputTopics[0] ?? '';
  const cases: { kind: string; acl: string; trigger: () => Promise<void>; named: RegExp }[] = [
    {
      kind: 'logserver',
      acl: planned('logserver', `--operation Write --topic ${logged}`),
      trigger: feed,
      named: refused('logserver', 'WRITE', 'TOPIC', logged),
    },
    {
      kind: 'alerter',
      acl: planned('alerter', `--operation Read --topic ${detected}`),
      trigger: feed,
      named: refused('alerter', 'READ', 'TOPIC', detected),
    },
    {
      kind: 'collector',
      acl: planned('collector', `--operation Write --topic ${changelog}`),
      trigger: feed,
      named: refused('collector', 'WRITE', 'TOPIC', changelog),
    },
    {
      kind: 'prefilter',
      acl: planned('prefilter', `--operation Write --topic ${dlt}`),
      trigger: feedGarbage,
      named: refused('prefilter', 'WRITE', 'TOPIC', dlt),
    },
    {
      // Written outside the transaction, before each batch: the refusal must name this topic.
      kind: 'inspector',
      acl: planned('inspector', `--operation Write --topic ${attempts}`),
      trigger: feed,
      named: new RegExp(`User:inspector may not WRITE on TOPIC ${escaped(attempts)}(:|$)`, 'm'),
    },
    {
      // Checked at every transaction, not only when the producer starts.
      kind: 'detector',
      acl: planned('detector', `--transactional-id ${detectorIds}`),
      trigger: feed,
      named: refused('detector', 'WRITE', 'TRANSACTIONAL_ID', detectorIds),
    },
  ];
  for (const c of cases) {
    const proc = running.get(c.kind);
    assert.ok(proc);
    await applyAcls(cluster.bootstrapServers, c.acl, 'remove');
    const removed = Date.now();
    await c.trigger();
    await waitFor(() => proc.child.exitCode !== null, {
      timeoutMs: 60_000,
      message: `the ${c.kind} stops by itself without ${c.acl}`,
      observe: describeRunning,
    });
    const text = proc.lines.join('\n');
    assert.notEqual(proc.child.exitCode, 0, `the ${c.kind} says it failed`);
    assert.match(
      text,
      c.named,
      `the ${c.kind}'s output names principal, operation and resource:\n${text.slice(-3000)}`,
    );
    console.log(
      `${c.kind} without ${c.acl.replace(/^.*--allow-principal /, '')}: stopped in ${Date.now() - removed} ms`,
    );
    for (const [kind, p] of running)
      if (kind !== c.kind)
        assert.equal(
          p.child.exitCode,
          null,
          `${kind} still runs while the ${c.kind} lacks an ACL:\n${describeRunning()}`,
        );
    await applyAcls(cluster.bootstrapServers, c.acl, 'add');
    start(c.kind);
    await assertExact(`after ${c.kind} got its ACL back and restarted`);
  }

  // The agent copied every line's server_logs row (at least once; the dedup view shows each once).
  const served = await pollUntil(
    () => clickhouseNumber(clickhouseUrl, `SELECT count() FROM ${database}.server_logs_dedup`),
    (n) => n >= fed.lines,
    60_000,
  );
  assert.equal(served, fed.lines, 'server_logs rows in ClickHouse, through the agent under its plan');
  const output = [...running.values()].flatMap((p) => p.lines).join('\n');
  for (const user of ['admin', ...USERS])
    assert.equal(
      output.includes(user === 'admin' ? ADMIN_PASSWORD : password(user)),
      false,
      `${user}'s password in a log line`,
    );
});
