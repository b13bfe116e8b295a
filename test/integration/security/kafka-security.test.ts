import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { pino } from 'pino';
import type { KafkaSecurity } from '../../../src/config/index.ts';
import { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { createKafkaCertificates, type KafkaCertificates } from '../../../src/dev/kafka-tls.ts';
import { defaultVarDir } from '../../../src/dev/paths.ts';
import { useKafkaSecurity } from '../../../src/kafka/security.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { exited } from '../../support/spawn-worker.ts';
import { applyAcls as applyAclsOn } from '../../support/acl/apply-acls.ts';
import { assertExactlyOnce, createTopics, seed, testKafkaOptions } from '../../support/pipeline-harness.ts';
import type { MonitoringAgent } from '../../../src/app/monitoring-agent.ts';
import { agentKafkaNames } from '../../../src/app/monitoring-agent.ts';
import { tableDef } from '../../../src/monitoring/tables.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import {
  command,
  counts,
  produce,
  rows,
  startAgent,
  testConfig,
  type MonitoringWorld,
} from '../monitoring/support.ts';

/**
 * A cluster of its own with an SSL (client certificates required) and a SASL_SSL (SCRAM) listener
 * and the ACL authorizer on: `admin` is a super user, `alice` and the client certificate's
 * principal get only what a test grants them. Ports 50 above the shared test broker's.
 */
const BASE_PORT = Number(process.env.HAMSTRING_TEST_KAFKA_PORT ?? 21092) + 50;
const API_TIMEOUT_MS = 5_000;
const ADMIN_PASSWORD = 'admin-Secret-4711';
const ALICE_PASSWORD = 'alice-Secret-0815';
const dataDir = defaultVarDir(`test-kafka-secure-${BASE_PORT}`);

let cluster: LocalKafkaCluster;
let certs: KafkaCertificates;
let otherCa: KafkaCertificates;
/** Every log line of every worker of this file (in-process and children). */
const logLines: string[] = [];
const children: ChildProcess[] = [];
const log = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });

const scram = (user: string, password: string, caFile = certs.caCert): KafkaSecurity => ({
  protocol: 'SASL_SSL',
  verifyHostname: true,
  caFile,
  sasl: { mechanism: 'SCRAM-SHA-256', username: user, password },
});
const asAdmin = (): void => useKafkaSecurity(scram('admin', ADMIN_PASSWORD));

before(async () => {
  certs = createKafkaCertificates(join(dataDir, 'certs'));
  otherCa = createKafkaCertificates(join(dataDir, 'other-ca'));
  cluster = await LocalKafkaCluster.start({
    nodes: 1,
    dataDir,
    basePort: BASE_PORT,
    heapMb: 384,
    security: {
      certificates: certs,
      users: [
        { name: 'admin', password: ADMIN_PASSWORD },
        { name: 'alice', password: ALICE_PASSWORD },
      ],
      acls: { superUsers: ['User:admin'] },
    },
  });
});

after(async () => {
  for (const c of children) c.kill('SIGKILL');
  useKafkaSecurity({ protocol: 'PLAINTEXT', verifyHostname: true });
  await cluster?.stop();
});

async function prepare(label: string, records: number, partitions = 1) {
  asAdmin();
  const input = uniqueTopic(`sec-${label}-in`);
  const output = uniqueTopic(`sec-${label}-out`);
  await createTopics(cluster.saslSslBootstrap, [input, output], partitions);
  await seed(cluster.saslSslBootstrap, input, 0, records);
  return { input, output, group: uniqueGroup(`sec-${label}`) };
}

function worker(bootstrap: string, t: { input: string; output: string; group: string }) {
  return new TransactionalWorker({
    stage: {
      name: t.group,
      inputTopics: [t.input],
      outputTopics: [t.output],
      process: (records) => ({
        outputs: records.map((r) => ({ topic: t.output, key: r.key, value: r.value })),
      }),
    },
    instanceId: '0',
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, { apiTimeoutMs: API_TIMEOUT_MS }),
    batch: { size: 50, timeoutMs: 50 },
    attemptStore: false,
    recordErrors: { deadLetters: false },
    log,
  });
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Starts a worker and waits until it stopped by itself; returns its status and how long it took. */
async function runUntilStopped(w: TransactionalWorker, limitMs: number) {
  const began = Date.now();
  await w.start();
  const stopped = await Promise.race([
    w.done().then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), limitMs)),
  ]);
  const tookMs = Date.now() - began;
  if (!stopped) await w.stop();
  return {
    status: w.status(),
    stopped,
    tookMs,
    reconnects: (await w.metrics.reconnectAttempts.get()).values,
  };
}

/** `hamstring acl-plan` for a module stage (or `monitoring-agent`), as the operator would run it. */
async function aclPlan(stageModule: string, principal: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['bin/hamstring.js', 'acl-plan', stageModule, '--principal', principal, '--config', 'config.yaml'],
    { env: { ...process.env, ...env }, timeout: 60_000 },
  );
  return stdout;
}

const applyAcls = (commands: string, action: 'add' | 'remove') =>
  applyAclsOn(cluster.bootstrapServers, commands, action);

describe('Kafka over TLS and SASL (a cluster with SSL, SASL_SSL/SCRAM and ACLs)', () => {
  test('exactly once over SASL_SSL with a worker killed -9 mid-transaction and restarted', async () => {
    const t = await prepare('kill', 1_500, 3);
    const passwordFile = join(dataDir, 'admin.password');
    writeFileSync(passwordFile, `${ADMIN_PASSWORD}\n`, { mode: 0o600 });
    const env = {
      BOOTSTRAP: cluster.saslSslBootstrap,
      INPUT: t.input,
      OUTPUT: t.output,
      GROUP: t.group,
      INSTANCE: '0',
      BATCH_SIZE: '100',
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      KAFKA_SASL_USERNAME: 'admin',
      KAFKA_SASL_PASSWORD_FILE: passwordFile,
      KAFKA_SSL_CA_FILE: certs.caCert,
      HAMSTRING_LOG_LEVEL: 'debug',
    };
    const spawnWorker = (extra: Record<string, string> = {}) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/worker-process.ts'], {
        env: { ...process.env, ...env, ...extra },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      const lines: string[] = [];
      createInterface({ input: child.stdout }).on('line', (l) => {
        lines.push(l);
        logLines.push(l);
      });
      createInterface({ input: child.stderr }).on('line', (l) => logLines.push(l));
      return { child, lines };
    };
    const first = spawnWorker({ HOLD_AT_COMMIT: '4' });
    await waitFor(() => first.lines.includes('HOLDING'), {
      timeoutMs: 60_000,
      message: 'the worker holds an open transaction over SASL_SSL',
    });
    first.child.kill('SIGKILL');
    await exited(first.child);
    const second = spawnWorker();
    asAdmin();
    await assertExactlyOnce(cluster.saslSslBootstrap, { ...t, expected: 1_500, timeoutMs: 120_000 });
    assert.ok(
      second.lines.some((l) => l.includes('committed')),
      'the restarted worker committed',
    );
    second.child.kill('SIGTERM');
    await exited(second.child);
  });

  test('a wrong password stops the worker within the API timeout, naming the principal, without reconnecting', async () => {
    const t = await prepare('badpw', 10);
    useKafkaSecurity(scram('alice', 'not-the-password'));
    const r = await runUntilStopped(worker(cluster.saslSslBootstrap, t), 4 * API_TIMEOUT_MS);
    assert.ok(r.stopped, `stopped by itself: ${JSON.stringify(r.status)}`);
    assert.ok(r.tookMs <= API_TIMEOUT_MS + 2_000, `stopped after ${r.tookMs} ms`);
    assert.match(
      r.status.failure ?? '',
      /^not authorized: _AUTHENTICATION .*User:alice could not authenticate/,
    );
    assert.equal(r.reconnects[0]?.value ?? 0, 0);
  });

  test('a broker certificate from an untrusted CA stops the worker within the API timeout, naming the TLS handshake', async () => {
    const t = await prepare('untrusted', 10);
    useKafkaSecurity(scram('alice', ALICE_PASSWORD, otherCa.caCert));
    const r = await runUntilStopped(worker(cluster.saslSslBootstrap, t), 4 * API_TIMEOUT_MS);
    assert.ok(r.stopped, `stopped by itself: ${JSON.stringify(r.status)}`);
    assert.ok(r.tookMs <= API_TIMEOUT_MS + 2_000, `stopped after ${r.tookMs} ms`);
    assert.match(
      r.status.failure ?? '',
      /^not authorized: _SSL .*TLS handshake of User:alice failed.*certificate verify failed/,
    );
    assert.equal(r.reconnects[0]?.value ?? 0, 0);
  });

  test('acl-plan output lets the stage run over mTLS and SASL_SSL; without any one of its ACLs it stops naming principal, resource and operation', async () => {
    const t = await prepare('plan', 200);
    const stageModule = join(dataDir, 'plan-stage.ts');
    writeFileSync(
      stageModule,
      `export const stage = { name: '${t.group}', inputTopics: ['${t.input}'], outputTopics: ['${t.output}'],\n` +
        `  process: (records) => ({ outputs: records.map((r) => ({ topic: '${t.output}', key: r.key, value: r.value })) }) };\n`,
    );
    const plan = await aclPlan(stageModule, 'User:alice', {});
    const certPlan = await aclPlan(stageModule, `User:${certs.clientName}`, {});
    assert.match(plan, new RegExp(`--allow-principal User:alice --operation Read --group ${t.group}\\b`));
    await applyAcls(plan + certPlan, 'add');

    // mTLS: the certificate's CN is the principal.
    useKafkaSecurity({
      protocol: 'SSL',
      verifyHostname: true,
      caFile: certs.caCert,
      certificateFile: certs.clientCert,
      keyFile: certs.clientKey,
    });
    const viaCert = worker(cluster.sslBootstrap, t);
    await viaCert.start();
    await waitFor(() => viaCert.status().committedTransactions > 0, {
      timeoutMs: 60_000,
      message: 'the worker commits over mTLS with the planned ACLs',
      observe: () => viaCert.status(),
    });
    // Checked while it runs (the worker's clients keep the settings they were made with).
    asAdmin();
    await assertExactlyOnce(cluster.saslSslBootstrap, { ...t, expected: 200 });
    await viaCert.stop();

    // The same plan for alice over SASL_SSL: the worker starts and gets ready.
    useKafkaSecurity(scram('alice', ALICE_PASSWORD));
    const viaSasl = worker(cluster.saslSslBootstrap, t);
    await viaSasl.start();
    await waitFor(() => viaSasl.status().ready, {
      timeoutMs: 60_000,
      message: 'the worker gets ready over SASL_SSL with the planned ACLs',
      observe: () => viaSasl.status(),
    });
    await viaSasl.stop();

    // Each ACL alice needs, removed alone: the next start stops at once, naming what is missing.
    const line = (pattern: string) => {
      const found = plan.split('\n').filter((l) => l.includes(pattern));
      assert.equal(found.length, 1, `one planned ACL has ${pattern}`);
      return found.join('');
    };
    const cases: [string, RegExp, number][] = [
      [
        line(`--operation Read --group ${t.group}`),
        new RegExp(`User:alice may not READ on GROUP ${t.group}\\b`),
        0,
      ],
      [
        line(`--transactional-id ${t.group}-`),
        new RegExp(`User:alice may not WRITE on TRANSACTIONAL_ID ${t.group}-0\\b`),
        0,
      ],
      [
        line(`--operation Write --topic ${t.output}`),
        new RegExp(`User:alice may not WRITE (or DESCRIBE )?on TOPIC ${t.output}\\b`),
        5,
      ],
      [
        line(`--operation Read --topic ${t.input}`),
        new RegExp(`User:alice may not READ (or DESCRIBE )?on TOPIC ${t.input}\\b`),
        0,
      ],
    ];
    let seeded = 200;
    for (const [acl, named, fresh] of cases) {
      if (fresh > 0) {
        asAdmin();
        await seed(cluster.saslSslBootstrap, t.input, seeded, fresh);
        seeded += fresh;
      }
      await applyAcls(acl, 'remove');
      useKafkaSecurity(scram('alice', ALICE_PASSWORD));
      const r = await runUntilStopped(worker(cluster.saslSslBootstrap, t), 4 * API_TIMEOUT_MS);
      assert.ok(r.stopped, `without ${acl} the worker stopped by itself: ${JSON.stringify(r.status)}`);
      assert.match(r.status.failure ?? '', named);
      assert.ok(r.tookMs <= 2 * API_TIMEOUT_MS + 2_000, `stopped after ${r.tookMs} ms`);
      assert.equal(r.reconnects[0]?.value ?? 0, 0);
      await applyAcls(acl, 'add');
    }
  });

  test('acl-plan monitoring-agent lets the agent copy every row over SASL_SSL, each visible once across a restart; without its group ACL it stops naming it', async () => {
    const chUrl = (await testClickHouse()).url;
    // The shipped names (as the plan prints them, from config.yaml), on this file's own cluster.
    const names = agentKafkaNames();
    const world: MonitoringWorld = {
      prefix: names.prefix,
      dlt: names.deadLetterTopic,
      database: `sec_${uniqueGroup('agent').replace(/[^a-z0-9]/gi, '_')}`,
      group: names.groupId,
      tables: [tableDef('alerts')],
    };
    const topic = `${world.prefix}alerts`;
    asAdmin();
    // As `hamstring up` does before it starts the agent: the agent itself creates no topic.
    await createTopics(cluster.saslSslBootstrap, [topic, world.dlt], 2);
    await produce(cluster.saslSslBootstrap, rows(world, 'alerts', 0, 300));
    const plan = await aclPlan('monitoring-agent', 'User:alice', {});
    assert.match(
      plan,
      new RegExp(`--allow-principal User:alice --operation Read --group ${world.group}$`, 'm'),
    );
    assert.doesNotMatch(plan, /--transactional-id|--operation Create/);
    await applyAcls(plan, 'add');

    const config = testConfig(cluster.saslSslBootstrap, chUrl);
    const asAlice = {
      log,
      kafka: testKafkaOptions(cluster.saslSslBootstrap, {
        groupId: world.group,
        apiTimeoutMs: API_TIMEOUT_MS,
      }),
    };
    const agents: MonitoringAgent[] = [];
    try {
      useKafkaSecurity(scram('alice', ALICE_PASSWORD));
      const first = await startAgent(config, cluster.saslSslBootstrap, world, asAlice);
      agents.push(first);
      await waitFor(async () => (await counts(chUrl, world.database, 'alerts')).dedup === 300, {
        timeoutMs: 60_000,
        message: '300 alert rows copied over SASL_SSL with the planned ACLs',
        observe: () => first.worker.status(),
      });
      await first.stop();
      // Rows that came while it was away: the next agent takes over from the committed offsets.
      asAdmin();
      await produce(cluster.saslSslBootstrap, rows(world, 'alerts', 300, 200));
      useKafkaSecurity(scram('alice', ALICE_PASSWORD));
      const second = await startAgent(config, cluster.saslSslBootstrap, world, asAlice);
      agents.push(second);
      await waitFor(async () => (await counts(chUrl, world.database, 'alerts')).dedup === 500, {
        timeoutMs: 60_000,
        message: '500 alert rows after the restart',
        observe: () => second.worker.status(),
      });
      // At least once, as the agent is: a row whose offset the stopped agent had not committed yet is
      // inserted again; ClickHouse's deduplication shows each once, as the dashboard reads them.
      const copied = await counts(chUrl, world.database, 'alerts');
      assert.equal(copied.dedup, 500, JSON.stringify(copied));
      assert.equal(copied.distinct, 500, JSON.stringify(copied));
      assert.ok(copied.raw >= 500, JSON.stringify(copied));
      await second.stop();

      // Without its group ACL the agent's worker stops by itself, naming principal, resource and operation.
      const groupAcl = plan.split('\n').filter((l) => l.includes(`--group ${world.group}`));
      assert.equal(groupAcl.length, 1, plan);
      await applyAcls(groupAcl.join(''), 'remove');
      const denied = await startAgent(config, cluster.saslSslBootstrap, world, asAlice);
      agents.push(denied);
      const stopped = await Promise.race([
        denied.worker.done().then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 4 * API_TIMEOUT_MS)),
      ]);
      assert.ok(
        stopped,
        `without the group ACL the agent stopped: ${JSON.stringify(denied.worker.status())}`,
      );
      assert.match(
        denied.worker.status().failure ?? '',
        new RegExp(`User:alice may not READ on GROUP ${world.group}\\b`),
      );
    } finally {
      await Promise.all(agents.map((a) => a.stop()));
      asAdmin();
      await command(chUrl, `DROP DATABASE IF EXISTS ${world.database}`);
    }
  });

  test('hamstring verify and hamstring run over SASL_SSL: no report, worker log or output line holds the SASL password, the key password, the ClickHouse password or the access token', async () => {
    const secrets = {
      sasl: ADMIN_PASSWORD,
      key: 'Key-Passphrase-31415926',
      clickhouse: 'Ch-Password-27182818',
      token: 'Access-Token-1618033988',
    };
    const passwordFile = join(dataDir, 'secrets-admin.password');
    writeFileSync(passwordFile, `${ADMIN_PASSWORD}\n`, { mode: 0o600 });
    const env = {
      ...process.env,
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      KAFKA_SASL_USERNAME: 'admin',
      KAFKA_SASL_PASSWORD_FILE: passwordFile,
      KAFKA_SSL_CA_FILE: certs.caCert,
      KAFKA_SSL_KEY_PASSWORD: secrets.key,
      CLICKHOUSE_PASSWORD: secrets.clickhouse,
      HAMSTRING_ACCESS_TOKEN: secrets.token,
      HAMSTRING_LOG_LEVEL: 'debug',
    };
    // The cheapest verify scenario, its workers logging at debug into the report directory.
    const reportDir = join(dataDir, 'verify-report');
    rmSync(reportDir, { recursive: true, force: true });
    const verify = await promisify(execFile)(
      process.execPath,
      [
        'bin/hamstring.js',
        'verify',
        '--bootstrap',
        cluster.saslSslBootstrap,
        '--scenario',
        'abort-hook',
      ].concat(['--records', '300', '--workers', '1', '--report-dir', reportDir]),
      { env, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 },
    );
    const files = filesUnder(reportDir);
    assert.ok(
      files.some((f) => f.endsWith('summary.md')),
      files.join(' '),
    );
    assert.ok(
      files.some((f) => f.includes(`${join(reportDir, 'logs')}/`)),
      `worker logs: ${files.join(' ')}`,
    );

    // `hamstring run` with the security in config.yaml: its start-up and first transactions.
    const t = await prepare('runlog', 50);
    const stageModule = join(dataDir, 'runlog-stage.ts');
    writeFileSync(
      stageModule,
      `export const stage = { name: '${t.group}', inputTopics: ['${t.input}'], outputTopics: ['${t.output}'],\n` +
        `  process: (records) => ({ outputs: records.map((r) => ({ topic: '${t.output}', key: r.key, value: r.value })) }) };\n`,
    );
    const configFile = join(dataDir, 'runlog-config.yaml');
    writeFileSync(
      configFile,
      readFileSync('config.yaml', 'utf8').replace(
        /^environment:\n/m,
        `environment:\n  kafka_bootstrap_servers: ${cluster.saslSslBootstrap}\n` +
          `  kafka_security:\n    protocol: SASL_SSL\n    ca_file: ${certs.caCert}\n` +
          `    sasl: { mechanism: SCRAM-SHA-512, username: admin, password_file: ${passwordFile} }\n`,
      ),
    );
    const runEnv = Object.fromEntries(
      Object.entries(env).filter(([k]) => !k.startsWith('KAFKA_SASL') && k !== 'KAFKA_SECURITY_PROTOCOL'),
    );
    const run = spawn(process.execPath, ['bin/hamstring.js', 'run', stageModule, '--config', configFile], {
      env: runEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(run);
    const runLines: string[] = [];
    createInterface({ input: run.stdout }).on('line', (l) => runLines.push(l));
    createInterface({ input: run.stderr }).on('line', (l) => runLines.push(l));
    asAdmin();
    await assertExactlyOnce(cluster.saslSslBootstrap, { ...t, expected: 50 });
    run.kill('SIGTERM');
    await exited(run);

    const texts = [
      ...files.map((f) => ({ where: f, text: readFileSync(f, 'utf8') })),
      { where: 'verify stdout', text: verify.stdout },
      { where: 'verify stderr', text: verify.stderr },
      { where: 'hamstring run output', text: runLines.join('\n') },
    ];
    assert.ok(runLines.length > 5 && verify.stdout.length + verify.stderr.length > 0, 'output was captured');
    for (const [name, secret] of Object.entries(secrets))
      for (const { where, text } of texts)
        assert.equal(text.includes(secret), false, `the ${name} secret in ${where}`);
  });

  test('no log line of this file carries a password', () => {
    assert.ok(logLines.length > 20, `logs were captured (${logLines.length} lines)`);
    const text = logLines.join('\n');
    for (const secret of [ADMIN_PASSWORD, ALICE_PASSWORD])
      assert.equal(text.includes(secret), false, `a log line carries the password ${secret.slice(0, 5)}...`);
  });
});
