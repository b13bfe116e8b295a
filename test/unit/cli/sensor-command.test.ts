import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../../src/cli/command.ts';
import { sensorFromOptions } from '../../../src/cli/commands/sensor.ts';
import { validateConfig } from '../../../src/config/index.ts';
import { minimalConfig, withValue } from '../config/helpers.ts';

const config = validateConfig(
  withValue(
    minimalConfig(),
    ['pipeline', 'sensors'],
    [{ name: 'r1', kind: 'dnstap', dnstap: { unix: '/run/r1.sock' } }],
  ),
  { env: {} },
);

test('hamstring sensor dnstap: flags build a sensor with the configuration defaults', () => {
  const s = sensorFromOptions(config, {
    tcp: '127.0.0.1:6000',
    observe: 'client_query,CLIENT_RESPONSE',
    'metrics-port': '9109',
  });
  assert.deepEqual(s.dnstap.tcp, { host: '127.0.0.1', port: 6000 });
  assert.deepEqual(s.dnstap.observe, ['CLIENT_QUERY', 'CLIENT_RESPONSE']);
  assert.equal(s.metrics_port, 9109);
  assert.equal(s.buffer.capacity, 50_000);
  assert.equal(sensorFromOptions(config, { name: 'r1' }).dnstap.unix, '/run/r1.sock');
});

test('hamstring sensor dnstap: bad flags are usage errors naming the flag', () => {
  assert.throws(
    () => sensorFromOptions(config, {}),
    (e) => e instanceof UsageError && /--unix PATH, --tcp HOST:PORT or --name/.test(e.message),
  );
  assert.throws(() => sensorFromOptions(config, { tcp: 'host' }), /--tcp: expected host:port/);
  assert.throws(
    () => sensorFromOptions(config, { unix: '/x', observe: 'NOPE' }),
    /--observe: expected AUTH_QUERY/,
  );
  assert.throws(() => sensorFromOptions(config, { name: 'r2' }), /no dnstap sensor "r2"/);
  assert.throws(() => sensorFromOptions(config, { name: 'r1', unix: '/x' }), /--name takes its sockets/);
});
