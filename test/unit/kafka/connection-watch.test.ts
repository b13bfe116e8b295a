import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { bootstrapAddresses, checkBootstrap } from '../../../src/kafka/bootstrap-check.ts';
import { classifyKafkaError } from '../../../src/kafka/classify.ts';
import { ConnectionWatch, hasBrokerUp } from '../../../src/kafka/connection-watch.ts';
import { code } from '../../../src/kafka/error-codes.ts';
import { captureLog } from '../../helpers/capture-log.ts';

const stats = (state: string) => JSON.stringify({ brokers: { 'b:9092/1': { source: 'learned', state } } });

describe('ConnectionWatch', () => {
  it('logs the first failed attempt at once with the bootstrap address and the cause, and clears when a broker is up', () => {
    const { log, lines } = captureLog();
    let now = 1_000;
    const listeners: ((e: { message: string }) => void)[] = [];
    const watch = new ConnectionWatch({
      bootstrapServers: 'kafka-typo:9092',
      clientId: 'c',
      log,
      now: () => now,
    }).attach({
      on: (_event, l) => listeners.push(l),
    });
    const resolve = classifyKafkaError(
      { code: code('_RESOLVE'), message: 'Failed to resolve kafka-typo:9092' },
      'client',
    );
    assert.equal(watch.error(resolve), true);
    assert.equal(lines.length, 1);
    assert.match(String(lines[0]!.msg), /host name does not resolve \(_RESOLVE\): bootstrap kafka-typo:9092/);
    now = 4_000;
    watch.error(classifyKafkaError({ code: code('_TRANSPORT'), message: 'refused' }, 'client'));
    assert.deepEqual(watch.problem(), {
      address: 'kafka-typo:9092',
      since: 1_000,
      code: '_TRANSPORT',
      reason: 'refused',
      allBrokersDown: true,
    });
    for (const l of listeners) l({ message: stats('CONNECT') });
    assert.notEqual(watch.problem(), undefined);
    for (const l of listeners) l({ message: stats('UP') });
    assert.equal(watch.problem(), undefined);
    assert.match(String(lines.at(-1)!.msg), /connected to kafka-typo:9092 again/);
  });

  it('knows every broker is down from the FAIL lines before the next statistics say so', () => {
    const { log } = captureLog();
    const stats: ((e: { message: string }) => void)[] = [];
    const logs: ((e: { message: string; fac?: string }) => void)[] = [];
    const watch = new ConnectionWatch({ bootstrapServers: 'b:9092', clientId: 'c', log }).attach({
      on: (event, l) => void (event === 'event.stats' ? stats : logs).push(l),
    });
    const two = JSON.stringify({
      brokers: {
        'b:9092/1': { source: 'learned', state: 'UP' },
        'b:9093/2': { source: 'learned', state: 'UP' },
      },
    });
    for (const l of stats) l({ message: two });
    const fail = (broker: string, what: string) => {
      for (const l of logs) l({ fac: 'FAIL', message: `[thrd:${broker}]: ${broker}: ${what}` });
    };
    fail('b:9092/1', 'Disconnected: connection closed by peer (after 4735ms in state UP)');
    assert.equal(watch.problem(), undefined, 'a closed connection alone is no connection problem');
    fail('b:9092/1', 'Connect to ipv4#10.0.0.1:9092 failed: Connection refused (after 0ms in state CONNECT)');
    assert.equal(watch.problem()?.allBrokersDown, false, 'broker 2 is still up');
    fail('b:9093/2', 'Disconnected: connection closed by peer (after 5000ms in state UP)');
    assert.equal(watch.problem()?.allBrokersDown, true);
    for (const l of stats) l({ message: two });
    assert.equal(watch.problem(), undefined);
  });

  it('ignores errors that are not about the connection', () => {
    const { log, lines } = captureLog();
    const watch = new ConnectionWatch({ bootstrapServers: 'k:9092', clientId: 'c', log });
    assert.equal(watch.error(classifyKafkaError({ code: code('UNKNOWN_MEMBER_ID') }, 'client')), false);
    assert.equal(watch.problem(), undefined);
    assert.equal(lines.length, 0);
    assert.equal(hasBrokerUp('not json'), false);
  });
});

describe('checkBootstrap', () => {
  it('parses host:port lists, IPv6 in brackets included', () => {
    assert.deepEqual(bootstrapAddresses('a:1, [::1]:9092'), [
      { address: 'a:1', host: 'a', port: 1 },
      { address: '[::1]:9092', host: '::1', port: 9092 },
    ]);
  });

  it('tells an unresolvable host name from a closed port, naming each address', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const open = (server.address() as { port: number }).port;
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    try {
      const problems = await checkBootstrap(
        `no-such-host.invalid:9092,127.0.0.1:${closedPort},127.0.0.1:${open}`,
      );
      assert.equal(problems.length, 2);
      assert.equal(problems[0]!.address, 'no-such-host.invalid:9092');
      assert.equal(problems[0]!.code, '_RESOLVE');
      assert.match(problems[0]!.reason, /does not resolve/);
      assert.equal(problems[1]!.address, `127.0.0.1:${closedPort}`);
      assert.equal(problems[1]!.code, '_TRANSPORT');
      assert.match(problems[1]!.reason, /connection refused/);
    } finally {
      server.close();
    }
  });
});
