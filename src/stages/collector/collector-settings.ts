import type { CollectorConfig, HamstringConfig } from '../../config/index.ts';
import type { SubnetPrefixes } from '../subnet.ts';
import type { BatchBufferSettings } from './batch-buffer.ts';

export interface CollectorSettings {
  readonly buffer: BatchBufferSettings;
  readonly subnet: SubnetPrefixes;
  readonly timerIntervalMs: number;
}

/** Context older than this many batch timeouts is dropped (a long-quiet subnet starts afresh). */
export const CONTEXT_TTL_TIMEOUTS = 10;

/**
 * A collector's batch settings: its `batch_handler_config_override` merged over
 * `default_batch_handler_config`, as in the Python system. The timer runs at a quarter of the timeout
 * (100 ms to 1 s), so a quiet subnet's batch leaves at most that late after its `batch_timeout`; while
 * lines flow, due batches leave with the lines' own transactions (each timer call is a transaction
 * of its own, which a busy collector cannot afford several times a second per partition).
 */
export function collectorSettings(config: HamstringConfig, collector: CollectorConfig): CollectorSettings {
  const defaults = config.pipeline.log_collection.default_batch_handler_config;
  const override = collector.batch_handler_config_override;
  const timeoutMs = Math.round((override?.batch_timeout ?? defaults.batch_timeout) * 1000);
  return {
    buffer: {
      batchSize: override?.batch_size ?? defaults.batch_size,
      timeoutMs,
      contextTtlMs: timeoutMs * CONTEXT_TTL_TIMEOUTS,
      maxBatchBytes: override?.max_batch_bytes ?? defaults.max_batch_bytes,
    },
    subnet: {
      ipv4_prefix_length: override?.subnet_id?.ipv4_prefix_length ?? defaults.subnet_id.ipv4_prefix_length,
      ipv6_prefix_length: override?.subnet_id?.ipv6_prefix_length ?? defaults.subnet_id.ipv6_prefix_length,
    },
    timerIntervalMs: Math.min(1000, Math.max(100, Math.round(timeoutMs / 4))),
  };
}
