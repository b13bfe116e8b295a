import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { runStages, type RunningStages } from '../../../src/app/run-stages.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { freePort } from '../../helpers/free-port.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createTopics, passThroughStage, readCommitted, seed } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});
let running: RunningStages | undefined;
after(() => running?.stop());

test('runStages wires the config: health port with runtime.metrics off, stage log level, delivery-attempt store on by default', async () => {
  const input = uniqueTopic('app-in');
  const output = uniqueTopic('app-out');
  const name = uniqueGroup('app.stage');
  await createTopics(bootstrap, [input, output], 2);
  await seed(bootstrap, input, 0, 200);
  const port = await freePort();
  const config = loadConfig({
    env: {},
    text: `
logging:
  modules:
    ${name}: { debug: true }
environment:
  kafka_bootstrap_servers: ${bootstrap}
  monitoring: { clickhouse_server: { hostname: 127.0.0.1 } }
  kafka_consumer: { max_poll_interval_ms: 30000, session_timeout_ms: 6000, heartbeat_interval_ms: 1000 }
runtime:
  health_port: ${port}
  metrics: false
`,
  });
  const copy = passThroughStage(input, output, name);
  const lines: { level: number; stage?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as never);
      done();
    },
  });
  running = await runStages({
    config,
    stages: [
      {
        ...copy,
        process: (records, ctx) => {
          ctx.log.debug({ records: records.length }, 'batch');
          return copy.process(records, ctx);
        },
      },
    ],
    env: { HAMSTRING_INSTANCE_ID: 'run-stages-test', UV_THREADPOOL_SIZE: '16' },
    log: pino({ level: 'info' }, sink),
    signals: [],
  });
  assert.equal(running.healthPort, port);
  await readCommitted(bootstrap, output, 200);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, {
    timeoutMs: 30_000,
    message: '/readyz answers 200',
  });
  const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(metrics.status, 200);
  assert.doesNotMatch(
    await metrics.text(),
    /hamstring_|process_|nodejs_/,
    "runtime.metrics: false exposes no series, neither the workers' nor the process's",
  );

  assert.ok(
    lines.some((l) => l.level === 20 && l.stage === name),
    "logging.modules.<stage>.debug: the stage's debug lines pass under an info base logger",
  );
  assert.ok(!lines.some((l) => l.level === 20 && l.stage !== name), 'the base logger stays at info');

  const markers = await readCommitted(
    bootstrap,
    config.environment.record_errors.delivery_attempts_topic,
    1,
    10_000,
  );
  assert.ok(
    markers.some((m) => m.key?.toString().startsWith(`${name}|${input}|`)),
    'delivery markers of the stage were written (bounded redelivery is on by default)',
  );
  await running.stop();
  assert.equal(await running.done, false);
  running = undefined;
});
