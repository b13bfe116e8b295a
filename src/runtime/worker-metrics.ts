import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of one worker; its own registry so several workers can share a process. */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly commits: Counter;
  readonly aborts: Counter<'reason'>;
  readonly recoveries: Counter<'kind' | 'action'>;
  readonly epochChanges: Counter<'cause'>;
  readonly epoch: Gauge;
  readonly maxPollExceeded: Counter;
  readonly staleBatches: Counter;
  readonly belowCommit: Counter;
  readonly discardedOutputs: Counter;
  readonly deadLetters: Counter<'error_kind'>;
  readonly reconnectAttempts: Counter;
  readonly retries: Counter<'error_kind'>;
  readonly bisections: Counter;
  readonly processingTimeouts: Counter;
  readonly batchSize: Histogram;
  readonly transactionSeconds: Histogram;
  readonly processSeconds: Histogram;
  readonly lag: Gauge;
  readonly lastCommit: Gauge;
  readonly records: Counter<'direction'>;
  readonly alert: Gauge<'condition'>;
  readonly up: Gauge;

  constructor(labels: { stage: string; instance: string }) {
    this.registry.setDefaultLabels(labels);
    const r = [this.registry];
    const p = 'hamstring_worker_';
    this.commits = new Counter({
      name: `${p}transactions_committed_total`,
      help: 'Committed output transactions',
      registers: r,
    });
    this.aborts = new Counter({
      name: `${p}transactions_aborted_total`,
      help: 'Aborted transactions by reason',
      labelNames: ['reason'],
      registers: r,
    });
    this.recoveries = new Counter({
      name: `${p}recoveries_total`,
      help: 'Recoveries by error kind and action',
      labelNames: ['kind', 'action'],
      registers: r,
    });
    this.epochChanges = new Counter({
      name: `${p}epoch_changes_total`,
      help: 'Assignment epoch changes by cause',
      labelNames: ['cause'],
      registers: r,
    });
    this.epoch = new Gauge({
      name: `${p}assignment_epoch`,
      help: 'Current local assignment epoch',
      registers: r,
    });
    this.maxPollExceeded = new Counter({
      name: `${p}max_poll_exceeded_total`,
      help: 'librdkafka _MAX_POLL_EXCEEDED errors',
      registers: r,
    });
    this.staleBatches = new Counter({
      name: `${p}stale_batches_total`,
      help: 'Batches discarded as stale before a transaction',
      registers: r,
    });
    this.belowCommit = new Counter({
      name: `${p}records_below_commit_total`,
      help: "Fetched records below this worker's own commit, dropped instead of processed again",
      registers: r,
    });
    this.discardedOutputs = new Counter({
      name: `${p}discarded_outputs_total`,
      help: 'Outputs discarded with an aborted transaction',
      registers: r,
    });
    this.deadLetters = new Counter({
      name: `${p}dead_letters_total`,
      help: 'Records dead-lettered',
      labelNames: ['error_kind'],
      registers: r,
    });
    this.retries = new Counter({
      name: `${p}record_retries_total`,
      help: 'Record failures scheduled for a retry with back-off, by error kind',
      labelNames: ['error_kind'],
      registers: r,
    });
    this.bisections = new Counter({
      name: `${p}bisections_total`,
      help: 'Failed batches split to isolate the failing records',
      registers: r,
    });
    this.processingTimeouts = new Counter({
      name: `${p}processing_timeouts_total`,
      help: 'Batches abandoned after the processing timeout',
      registers: r,
    });
    this.reconnectAttempts = new Counter({
      name: `${p}reconnect_attempts_total`,
      help: 'Attempts to reach Kafka during a transport recovery',
      registers: r,
    });
    this.batchSize = new Histogram({
      name: `${p}batch_size`,
      help: 'Records per consumed batch',
      buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000],
      registers: r,
    });
    this.transactionSeconds = new Histogram({
      name: `${p}transaction_seconds`,
      help: 'Begin to commit of output transactions',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: r,
    });
    this.processSeconds = new Histogram({
      name: `${p}process_seconds`,
      help: 'Time in stage.process per batch',
      buckets: [0.001, 0.01, 0.1, 1, 10, 60, 300],
      registers: r,
    });
    this.lag = new Gauge({
      name: `${p}consumer_lag`,
      help: 'Records behind the high watermark on assigned partitions',
      registers: r,
    });
    this.lastCommit = new Gauge({
      name: `${p}last_commit_timestamp_seconds`,
      help: 'Time of the last successful commit',
      registers: r,
    });
    this.records = new Counter({
      name: `${p}records_total`,
      help: 'Records consumed and produced',
      labelNames: ['direction'],
      registers: r,
    });
    this.alert = new Gauge({
      name: `${p}alert`,
      help: '1 while an operational alert condition of the recovery design holds',
      labelNames: ['condition'],
      registers: r,
    });
    this.up = new Gauge({
      name: `${p}ready`,
      help: '1 while the worker is ready (assigned and committing)',
      registers: r,
    });
  }
}
