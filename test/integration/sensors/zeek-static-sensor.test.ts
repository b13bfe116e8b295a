import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';
import { PcapSource } from '../../../src/app/sensors/pcap-source.ts';
import { startSensors } from '../../../src/app/sensors/start-sensor.ts';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import type { DnsObservation } from '../../../src/sources/dns-observation.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { createTopics, readCommitted } from '../../support/pipeline-harness.ts';
import { pipelineTestConfig } from '../pipeline/support.ts';

/**
 * Python HAMSTRING's `pipeline.zeek.sensors` with `static_analysis`, as `hamstring up` starts it:
 * the pcap files of `static_files_dir` become log lines on the logserver's input topic, each
 * observation once.
 */
const fixtures = fileURLToPath(new URL('../../fixtures/sources', import.meta.url));
let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

test('pipeline.zeek.sensors with static_analysis: every DNS exchange of the directory`s pcaps reaches the input topic once', async () => {
  // A protocol of its own, so the input topic is this test's alone.
  const protocol = uniqueTopic('zeekdns');
  const { config } = pipelineTestConfig({
    bootstrap,
    clickhousePort: 1,
    edit: (tree) => {
      const pipeline = tree.pipeline as Record<string, unknown>;
      const collection = pipeline.log_collection as { collectors: Record<string, unknown>[] };
      collection.collectors[0]!.protocol_base = protocol;
      pipeline.zeek = {
        sensors: { offline: { static_analysis: true, static_files_dir: fixtures, protocols: ['dns'] } },
      };
    },
  });
  const expected: DnsObservation[] = [];
  const direct = new PcapSource({ file: `${fixtures}/dns-loopback.pcap` });
  await direct.start(
    (o) => expected.push(o) > 0,
    (u) => assert.fail(u.reason),
  );
  await direct.ended;
  assert.ok(expected.length >= 5, `the fixture holds DNS exchanges (${expected.length})`);

  const topic = `hamstring_input-${protocol}`;
  await createTopics(bootstrap, [topic], 1);
  const sensors = await startSensors(config, silentLogger());
  assert.deepEqual(
    sensors.map((s) => s.topic),
    [topic],
  );
  const lines = await readCommitted(bootstrap, topic, expected.length, 30_000);
  for (const s of sensors) await s.stop();
  // Nothing beyond them: the sensor's producer is not transactional, so the end offset counts lines.
  const admin = createAdmin(bootstrap);
  try {
    assert.equal(
      (await admin.watermarks(topic)).reduce((n, w) => n + w.high, 0),
      expected.length,
    );
  } finally {
    admin.close();
  }
  const got = lines.map((r) => JSON.parse(String(r.value)) as Record<string, string>);
  assert.deepEqual(
    got.map((l) => [l.src_ip, l.domain_name]).sort(),
    expected.map((o) => [o.clientIp, o.queryName]).sort(),
  );
});
