import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Restore and local-copy metrics of one worker's stores, registered in the worker's registry. */
export class StateMetrics {
  /** Records restored, by store and source: `changelog` (read from Kafka) or `local` (the local copy). */
  readonly restoredRecords: Counter<'store' | 'source'>;
  readonly restoredBytes: Counter<'store' | 'source'>;
  readonly restoreSeconds: Histogram;
  readonly restoring: Gauge;
  readonly wiped: Counter<'store' | 'reason'>;
  readonly timerCalls: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    const p = 'hamstring_state_';
    this.restoredRecords = new Counter({
      name: `${p}restored_records_total`,
      help: 'Store records restored, from the changelog or from the local copy',
      labelNames: ['store', 'source'],
      registers,
    });
    this.restoredBytes = new Counter({
      name: `${p}restored_bytes_total`,
      help: 'Key and value bytes restored, from the changelog or from the local copy',
      labelNames: ['store', 'source'],
      registers,
    });
    this.restoreSeconds = new Histogram({
      name: `${p}restore_seconds`,
      help: 'Duration of one restore of newly assigned partitions',
      buckets: [0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300],
      registers,
    });
    this.restoring = new Gauge({
      name: `${p}restoring_partitions`,
      help: 'Assigned partitions still restoring (paused)',
      registers,
    });
    this.wiped = new Counter({
      name: `${p}local_copy_wiped_total`,
      help: 'Store partitions whose local copy was not trusted and was restored in full',
      labelNames: ['store', 'reason'],
      registers,
    });
    this.timerCalls = new Counter({
      name: `${p}timer_calls_total`,
      help: 'Timer calls started',
      registers,
    });
  }
}
