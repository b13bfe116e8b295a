import { loadConfig, type HamstringConfig } from '../../../src/config/index.ts';
import { SHIPPED_CONFIG_PATH } from '../config/helpers.ts';

/** The shipped config.yaml, validated: the stages must run with it as it is. */
export function shippedConfig(): HamstringConfig {
  return loadConfig({ path: SHIPPED_CONFIG_PATH, env: {} });
}

/** The shipped config with the collector's batch settings replaced. */
export function configWithBatches(
  batchSize: number,
  batchTimeoutSeconds: number,
  maxBatchBytes?: number,
): HamstringConfig {
  const config = shippedConfig();
  return {
    ...config,
    pipeline: {
      ...config.pipeline,
      log_collection: {
        ...config.pipeline.log_collection,
        default_batch_handler_config: {
          ...config.pipeline.log_collection.default_batch_handler_config,
          batch_size: batchSize,
          batch_timeout: batchTimeoutSeconds,
          ...(maxBatchBytes === undefined ? {} : { max_batch_bytes: maxBatchBytes }),
        },
      },
    },
  };
}

/** A DNS line the shipped collector accepts; `overrides` replace or (undefined) remove fields. */
export function dnsLine(overrides: Record<string, unknown> = {}): string {
  const line: Record<string, unknown> = {
    ts: '2026-11-30T00:00:00.000000Z',
    status_code: 'NXDOMAIN',
    src_ip: '10.2.54.7',
    dns_server_ip: '192.168.2.53',
    domain_name: 'photopixel.org',
    record_type: 'AAAA',
    response_ip: '2001:db8::1',
    size: '331b',
    ...overrides,
  };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete line[key];
  return JSON.stringify(line);
}
