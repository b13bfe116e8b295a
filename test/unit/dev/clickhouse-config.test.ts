import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clickHousePorts, clickHouseServerArgs } from '../../../src/dev/clickhouse-config.ts';

describe('clickhouse config', () => {
  test('defaults to Debian ports, interserver on tcp + 9', () => {
    assert.deepEqual(clickHousePorts(), { httpPort: 8123, tcpPort: 9000, interserverPort: 9009 });
    assert.deepEqual(clickHousePorts(18123, 19000), {
      httpPort: 18123,
      tcpPort: 19000,
      interserverPort: 19009,
    });
  });

  test('rejects colliding or invalid ports', () => {
    assert.throws(() => clickHousePorts(9000, 9000), /collide/);
    assert.throws(() => clickHousePorts(80, 9000), /invalid ClickHouse port 80/);
  });

  test('overrides every path and port of the system config after "--"', () => {
    const args = clickHouseServerArgs('/etc/ch.xml', '/d', clickHousePorts(18123, 19000));
    assert.deepEqual(args.slice(0, 2), ['--config-file=/etc/ch.xml', '--']);
    for (const expected of [
      '--path=/d/data/',
      '--tmp_path=/d/data/tmp/',
      '--user_files_path=/d/data/user_files/',
      '--format_schema_path=/d/data/format_schemas/',
      '--logger.log=/d/server.log',
      '--logger.errorlog=/d/server.err.log',
      '--http_port=18123',
      '--tcp_port=19000',
      '--interserver_http_port=19009',
    ]) {
      assert.ok(args.includes(expected), expected);
    }
  });
});
