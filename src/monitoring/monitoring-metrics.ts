import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of the monitoring agent (its worker has its own `WorkerMetrics`). */
export class MonitoringMetrics {
  readonly registry = new Registry();
  readonly rowsInserted: Counter<'table'>;
  readonly deadLetters: Counter<'reason'>;
  readonly insertSeconds: Histogram;
  readonly outages: Counter;
  readonly reconnectAttempts: Counter;
  readonly clickhouseUp: Gauge;

  constructor(labels: { instance: string }) {
    this.registry.setDefaultLabels(labels);
    const r = [this.registry];
    const p = 'hamstring_monitoring_';
    this.rowsInserted = new Counter({
      name: `${p}rows_inserted_total`,
      help: 'Rows sent to ClickHouse in successful inserts (replays included)',
      labelNames: ['table'],
      registers: r,
    });
    this.deadLetters = new Counter({
      name: `${p}dead_letters_total`,
      help: 'Monitoring records sent to the dead-letter topic, by reason',
      labelNames: ['reason'],
      registers: r,
    });
    this.insertSeconds = new Histogram({
      name: `${p}insert_seconds`,
      help: 'Duration of one ClickHouse insert (one chunk)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: r,
    });
    this.outages = new Counter({
      name: `${p}clickhouse_outages_total`,
      help: 'Insert failures that closed the Kafka consumer and started a ClickHouse reconnect loop',
      registers: r,
    });
    this.reconnectAttempts = new Counter({
      name: `${p}clickhouse_reconnect_attempts_total`,
      help: 'Attempts to reconnect to ClickHouse',
      registers: r,
    });
    this.clickhouseUp = new Gauge({
      name: `${p}clickhouse_up`,
      help: '1 while the agent holds a working ClickHouse connection',
      registers: r,
    });
  }
}
