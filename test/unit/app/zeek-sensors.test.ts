import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { zeekSensorConfigs } from '../../../src/app/sensors/zeek-sensors.ts';
import { loadConfig, type HamstringConfig } from '../../../src/config/index.ts';

const fixtures = fileURLToPath(new URL('../../fixtures/sources', import.meta.url));
const shipped = loadConfig({ path: 'config.yaml' });

function withZeek(sensors: Record<string, unknown>): HamstringConfig {
  return { ...shipped, pipeline: { ...shipped.pipeline, zeek: { sensors } } } as HamstringConfig;
}

test('pipeline.zeek.sensors become pcap sensors: one per pcap file of a static directory, one per interface', () => {
  const configs = zeekSensorConfigs(
    withZeek({
      offline: { static_analysis: true, static_files_dir: fixtures, interfaces: [], protocols: ['dns'] },
      edge: { static_analysis: false, interfaces: ['eth0', 'eth1'], protocols: ['dns', 'http'] },
      web: { static_analysis: false, interfaces: ['eth2'], protocols: ['http'] },
    }),
  );
  assert.deepEqual(
    configs.map((c) => [c.name, c.kind, c.kind === 'pcap' ? (c.pcap.file ?? c.pcap.interface) : '']),
    [
      ['offline-1', 'pcap', `${fixtures}/dns-loopback.pcap`],
      ['edge-eth0', 'pcap', 'eth0'],
      ['edge-eth1', 'pcap', 'eth1'],
    ],
  );
});

test('a static directory that cannot be read names the key and the directory', () => {
  assert.throws(
    () =>
      zeekSensorConfigs(
        withZeek({
          offline: {
            static_analysis: true,
            static_files_dir: '/nonexistent/pcaps',
            interfaces: [],
            protocols: ['dns'],
          },
        }),
      ),
    /pipeline\.zeek\.sensors\.offline\.static_files_dir: cannot read the directory \/nonexistent\/pcaps/,
  );
});
