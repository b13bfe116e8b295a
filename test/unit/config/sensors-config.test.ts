import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateConfig } from '../../../src/config/index.ts';
import { DEFAULT_LOG_LINE_MAPPING } from '../../../src/sources/log-line.ts';
import { configErrorOf, minimalConfig, withValue } from './helpers.ts';

const withSensors = (sensors: unknown) =>
  validateConfig(withValue(minimalConfig(), ['pipeline', 'sensors'], sensors), { env: {} });
const errorOf = (sensors: unknown) => configErrorOf(() => withSensors(sensors)).format();

test('no sensors by default; a dnstap entry gets its defaults', () => {
  assert.deepEqual(validateConfig(minimalConfig(), { env: {} }).pipeline.sensors, []);
  const [s] = withSensors([
    { name: 'r1', kind: 'dnstap', dnstap: { unix: '/run/hamstring/dnstap.sock', tcp: '127.0.0.1:6000' } },
  ]).pipeline.sensors;
  assert.ok(s?.kind === 'dnstap');
  assert.deepEqual(s.dnstap, {
    unix: '/run/hamstring/dnstap.sock',
    tcp: { host: '127.0.0.1', port: 6000 },
    observe: ['CLIENT_RESPONSE'],
    pairing: { capacity: 100_000, timeout_seconds: 10 },
    max_frame_bytes: 256 * 1024,
    plaintext_remote: false,
  });
  assert.deepEqual(s.buffer, { capacity: 50_000, max_pause_seconds: 2 });
  assert.deepEqual(s.log_line, DEFAULT_LOG_LINE_MAPPING);
  const [v6] = withSensors([{ name: 'r', kind: 'dnstap', dnstap: { tcp: '[::1]:6000' } }]).pipeline.sensors;
  assert.ok(v6?.kind === 'dnstap');
  assert.deepEqual(v6.dnstap.tcp, { host: '::1', port: 6000 });
});

test('dnstap.tcp: a port alone binds loopback; another address needs mutual TLS or an explicit opt-out', () => {
  const tcpOf = (dnstap: unknown) => {
    const [s] = withSensors([{ name: 'r', kind: 'dnstap', dnstap }]).pipeline.sensors;
    assert.ok(s?.kind === 'dnstap');
    return s.dnstap;
  };
  assert.deepEqual(tcpOf({ tcp: 6000 }).tcp, { host: '127.0.0.1', port: 6000 });
  assert.deepEqual(tcpOf({ tcp: '6001' }).tcp, { host: '127.0.0.1', port: 6001 });
  assert.match(
    errorOf([{ name: 'r', kind: 'dnstap', dnstap: { tcp: '0.0.0.0:6000' } }]),
    /pipeline\.sensors\[0\]\.dnstap\.tls: expected a tls section \(certificate_file, key_file, client_ca_file\) when dnstap\.tcp binds a non-loopback address .*got nothing \(dnstap\.tcp is 0\.0\.0\.0:6000\)/,
  );
  assert.equal(tcpOf({ tcp: '0.0.0.0:6000', plaintext_remote: true }).plaintext_remote, true);
  const tls = { certificate_file: '/c.pem', key_file: '/k.pem', client_ca_file: '/ca.pem' };
  assert.deepEqual(tcpOf({ tcp: '0.0.0.0:6000', tls }).tls, tls);
  assert.match(
    errorOf([{ name: 'r', kind: 'dnstap', dnstap: { unix: '/x', tls } }]),
    /pipeline\.sensors\[0\]\.dnstap\.tcp: expected host:port for the TLS listener/,
  );
  assert.match(
    errorOf([
      { name: 'r', kind: 'dnstap', dnstap: { tcp: 6000, tls: { ...tls, client_ca_file: undefined } } },
    ]),
    /pipeline\.sensors\[0\]\.dnstap\.tls\.client_ca_file: expected/,
  );
  assert.match(
    errorOf([{ name: 'r', kind: 'dnstap', dnstap: { tcp: 6000, tls: { ...tls, key_password: 'x' } } }]),
    /pipeline\.sensors\[0\]\.dnstap\.tls/,
  );
});

test('every sensor error names the key path and what is expected', () => {
  assert.match(
    errorOf([{ name: 'r', kind: 'dnstap', dnstap: {} }]),
    /pipeline\.sensors\[0\]\.dnstap\.unix: expected a socket path, or dnstap\.tcp \(host:port\), got nothing/,
  );
  assert.match(
    errorOf([{ name: 'r', kind: 'dnstap', dnstap: { tcp: 'localhost' } }]),
    /pipeline\.sensors\[0\]\.dnstap\.tcp: expected host:port/,
  );
  assert.match(
    errorOf([{ name: 'r', kind: 'dnstap', dnstap: { unix: '/x', observe: ['CLIENT_REPLY'] } }]),
    /pipeline\.sensors\[0\]\.dnstap\.observe\[0\]: expected AUTH_QUERY, .*CLIENT_RESPONSE/,
  );
  assert.match(
    errorOf([{ name: 'r', kind: 'sflow' }]),
    /pipeline\.sensors\[0\]\.kind: expected sensor with kind "dnstap"|pipeline\.sensors\[0\]: expected sensor with kind "dnstap"/,
  );
  assert.match(
    errorOf([{ name: 'r', kind: 'dnstap', dnstap: { unix: '/x' }, buffer: { capcity: 5 } }]),
    /pipeline\.sensors\[0\]\.buffer/,
  );
  assert.match(
    errorOf([{ name: 'r', kind: 'dnstap', dnstap: { unix: '/x' }, log_line: { ts: { from: 'time' } } }]),
    /pipeline\.sensors\[0\]\.log_line\.ts\.from: expected one of timestamp, client_ip/,
  );
  assert.match(
    errorOf([
      { name: 'r', kind: 'dnstap', dnstap: { unix: '/x' } },
      { name: 'r', kind: 'dnstap', dnstap: { unix: '/y' } },
    ]),
    /pipeline\.sensors\[1\]\.name: expected unique name, got "r"/,
  );
});
