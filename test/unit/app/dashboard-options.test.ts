import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dashboardOptionsFromConfig } from '../../../src/app/dashboard/index.ts';
import { StageInstances } from '../../../src/app/dashboard/stage-instances.ts';
import { validateConfig } from '../../../src/config/index.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { DEFAULT_HTTP_LIMITS } from '../../../src/runtime/http-guard.ts';

test('dashboard options come from the dashboard section and the ClickHouse server of config.yaml', () => {
  const config = validateConfig(
    {
      environment: {
        kafka_brokers: [{ hostname: 'kafka1', internal_port: 19092, external_port: 8097 }],
        monitoring: { clickhouse_server: { hostname: '::1', port: 18123 } },
      },
      dashboard: { port: 9999, host: '0.0.0.0', refresh_ms: 500, window_minutes: 30 },
    },
    { env: {} },
  );
  const log = silentLogger();
  const options = dashboardOptionsFromConfig(config, { log, metricsSources: ['http://w1:9464/metrics'] });
  const { instances, ...rest } = options;
  assert.ok(instances instanceof StageInstances, "the stages' instances are read from Kafka");
  assert.deepEqual(
    { ...rest, log: undefined },
    {
      port: 9999,
      host: '0.0.0.0',
      limits: DEFAULT_HTTP_LIMITS,
      refreshMs: 500,
      windowMs: 30 * 60_000,
      clickhouse: {
        url: 'http://[::1]:18123',
        database: 'default',
        connectTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
      },
      metricsSources: ['http://w1:9464/metrics'],
      log: undefined,
    },
  );
  const own = validateConfig(
    {
      environment: {
        kafka_brokers: [{ hostname: 'kafka1', internal_port: 19092, external_port: 8097 }],
        monitoring: { clickhouse_server: { hostname: 'ch', database: 'demo_1' } },
      },
    },
    { env: {} },
  );
  assert.equal(dashboardOptionsFromConfig(own, { log }).clickhouse.database, 'demo_1');
  assert.throws(
    () =>
      validateConfig(
        {
          environment: {
            kafka_brokers: [{ hostname: 'k', internal_port: 1, external_port: 1 }],
            monitoring: { clickhouse_server: { hostname: 'ch', database: 'x; DROP' } },
          },
        },
        { env: {} },
      ),
    /environment\.monitoring\.clickhouse_server\.database/,
  );
});
