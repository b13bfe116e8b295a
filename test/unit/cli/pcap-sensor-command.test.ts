import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { createSensorSource } from '../../../src/app/sensors/kinds.ts';
import { UsageError } from '../../../src/cli/command.ts';
import { pcapSensorFromOptions } from '../../../src/cli/commands/sensor.ts';
import { validateConfig } from '../../../src/config/index.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import type { DnsObservation } from '../../../src/sources/dns-observation.ts';
import { configErrorOf, minimalConfig, withValue } from '../config/helpers.ts';

const fixture = fileURLToPath(new URL('../../fixtures/sources/dns-loopback.pcap', import.meta.url));
const config = validateConfig(
  withValue(
    minimalConfig(),
    ['pipeline', 'sensors'],
    [{ name: 'lo', kind: 'pcap', pcap: { interface: 'lo' } }],
  ),
  { env: {} },
);

test('hamstring sensor pcap: a file or an interface from the flags, or a configured entry', () => {
  const fromFile = pcapSensorFromOptions(config, { file: fixture, 'metrics-port': '9110' });
  assert.deepEqual(fromFile.pcap, { file: fixture, snap_length: 65_535 });
  assert.equal(fromFile.metrics_port, 9110);
  assert.deepEqual(pcapSensorFromOptions(config, { name: 'lo' }).pcap, {
    interface: 'lo',
    snap_length: 65_535,
  });
  assert.throws(() => pcapSensorFromOptions(config, {}), UsageError);
  assert.throws(() => pcapSensorFromOptions(config, { file: 'a.pcap', interface: 'lo' }), UsageError);
  assert.throws(() => pcapSensorFromOptions(config, { name: 'nope' }), /no pcap sensor "nope"/);
});

test('a pcap sensor entry needs exactly one of interface and file, named by its key path', () => {
  for (const pcap of [{}, { interface: 'lo', file: 'a.pcap' }]) {
    const error = configErrorOf(() =>
      validateConfig(
        withValue(minimalConfig(), ['pipeline', 'sensors'], [{ name: 'p', kind: 'pcap', pcap }]),
        {
          env: {},
        },
      ),
    );
    assert.match(
      error.message,
      /pipeline\.sensors\[0\]\.pcap\.interface.*exactly one of pcap\.interface and pcap\.file/,
    );
  }
});

test('the pcap kind builds a live source that reads the file through the sensor interface', async () => {
  const sensor = pcapSensorFromOptions(config, { file: fixture });
  const { source, extra } = createSensorSource(sensor, silentLogger());
  const seen: DnsObservation[] = [];
  await source.start(
    (o) => seen.push(o) > 0,
    (u) => assert.fail(u.reason),
  );
  const deadline = Date.now() + 10_000;
  while (source.counters.received < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await source.stop();
  assert.equal(source.kind, 'pcap');
  assert.equal(seen.length, 6);
  assert.equal(typeof extra?.(), 'object');
});
