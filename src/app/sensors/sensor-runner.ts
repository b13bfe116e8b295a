import type { ProducerPort } from '../../kafka/producer.ts';
import type { Logger } from '../../observability/logger.ts';
import { RepeatFilter } from '../../observability/repeat-filter.ts';
import type { DnsObservation } from '../../sources/dns-observation.ts';
import { toLogLine, type LogLineMapping } from '../../sources/log-line.ts';
import type { MalformedUnit, ObservationSource } from '../../sources/observation-source.ts';
import { SensorBuffer, type BufferPolicy } from './sensor-buffer.ts';

/**
 * Runs one live source into the logserver's input topic: observations become log lines (the
 * configured mapping), keyed by client address (a host's lines stay in one partition, in order),
 * through a bounded buffer (`sensor-buffer.ts`: back-pressure, then counted drops) to an idempotent
 * producer. Generic over `ObservationSource`: every sensor kind runs through here.
 *
 * Delivery is at least once from the moment a line is in the buffer: the idempotent producer keeps
 * its retries from duplicating, but a sensor that dies loses what its buffer and the producer's queue
 * held, and a socket cannot replay. A line librdkafka gives up on (`message_timeout_ms` with Kafka
 * unreachable) is counted as failed.
 */
export interface SensorCounters {
  /** Units (frames, packets) the source read. */
  readonly received: number;
  readonly malformed: number;
  /** Well-formed units that give no line (a message type not observed, a query awaiting its response). */
  readonly ignored: number;
  /** Lines Kafka acknowledged. */
  readonly forwarded: number;
  /** Lines dropped because the buffer stayed full (see `sensor-buffer.ts`). */
  readonly dropped: number;
  /** Lines the producer gave up on (Kafka unreachable for longer than the message timeout). */
  readonly failed: number;
  /** Lines in the buffer and in the producer's queue. */
  readonly pending: number;
}

export interface SensorRunnerOptions {
  readonly name: string;
  readonly source: ObservationSource;
  readonly mapping: LogLineMapping;
  readonly topic: string;
  readonly producer: ProducerPort;
  readonly buffer: BufferPolicy;
  readonly log: Logger;
  /** Milliseconds between counter log lines; 0: none. */
  readonly logIntervalMs?: number;
}

interface Line {
  readonly key: string;
  readonly value: string;
}

const BATCH = 512;
const TICK_MS = 100;
const FLUSH_AT_STOP_MS = 30_000;

export class SensorRunner {
  readonly #buffer: SensorBuffer<Line>;
  readonly #malformedLog = new RepeatFilter({ intervalMs: 10_000, maxKeys: 200, now: Date.now });
  #queued = 0;
  #stopping = false;
  #wake: (() => void) | undefined;
  #pump: Promise<void> | undefined;
  #timers: NodeJS.Timeout[] = [];

  constructor(private readonly o: SensorRunnerOptions) {
    this.#buffer = new SensorBuffer(o.buffer);
  }

  get name(): string {
    return this.o.name;
  }

  get source(): ObservationSource {
    return this.o.source;
  }

  counters(): SensorCounters {
    const s = this.o.source.counters;
    const t = this.o.producer.tally();
    return {
      received: s.received,
      malformed: s.malformed,
      ignored: s.ignored,
      forwarded: t.delivered,
      dropped: this.#buffer.dropped,
      failed: t.failed,
      pending: this.#buffer.length + this.#queued - t.delivered - t.failed,
    };
  }

  /** Connects the producer, then opens the source. */
  async start(connectTimeoutMs = 30_000): Promise<void> {
    await this.o.producer.connect(connectTimeoutMs);
    this.#pump = this.#run();
    await this.o.source.start(
      (o) => this.#offer(o),
      (u) => this.#malformed(u),
    );
    this.#timers.push(setInterval(() => this.#tick(), TICK_MS));
    const every = this.o.logIntervalMs ?? 30_000;
    if (every > 0) this.#timers.push(setInterval(() => this.#logCounters(), every));
    for (const t of this.#timers) t.unref();
    this.o.log.info(
      { sensor: this.o.name, kind: this.o.source.kind, topic: this.o.topic },
      'sensor: started',
    );
  }

  /** Stops the source, hands what is buffered to Kafka and waits (bounded) for its delivery. */
  async stop(): Promise<SensorCounters> {
    for (const t of this.#timers) clearInterval(t);
    await this.o.source.stop();
    this.#stopping = true;
    this.#wake?.();
    // With Kafka down the pump can wait on a full producer queue; what it still holds is lost.
    await Promise.race([this.#pump, new Promise((resolve) => setTimeout(resolve, FLUSH_AT_STOP_MS).unref())]);
    try {
      await this.o.producer.flush(FLUSH_AT_STOP_MS);
    } catch (e) {
      this.o.log.warn({ sensor: this.o.name, err: String(e) }, 'sensor: lines still undelivered at stop');
    }
    await this.o.producer.close(10_000);
    const counters = this.counters();
    this.o.log.info({ sensor: this.o.name, ...counters }, 'sensor: stopped');
    return counters;
  }

  #offer(o: DnsObservation): boolean {
    const outcome = this.#buffer.offer({ key: o.clientIp, value: toLogLine(o, this.o.mapping) }, Date.now());
    this.#wake?.();
    return outcome !== 'full';
  }

  #tick(): void {
    if (this.#buffer.tick(Date.now())) {
      this.o.log.warn(
        { sensor: this.o.name, buffered: this.#buffer.length, capacity: this.o.buffer.capacity },
        'sensor: buffer full for longer than max_pause_seconds; reading again and dropping lines until it drains',
      );
      this.o.source.resume?.();
    }
  }

  async #run(): Promise<void> {
    for (;;) {
      const { items, reopened } = this.#buffer.take(BATCH);
      if (reopened) this.o.source.resume?.();
      if (items.length === 0) {
        if (this.#stopping) return;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
        continue;
      }
      for (const line of items) {
        try {
          await this.o.producer.produce({ topic: this.o.topic, key: line.key, value: line.value });
          this.#queued += 1;
        } catch (e) {
          // Only a record the client refuses outright (larger than message.max.bytes) lands here.
          this.#malformed({
            reason: `Kafka refused a line: ${String(e)}`,
            excerpt: line.value.slice(0, 200),
          });
        }
      }
    }
  }

  #malformed(unit: MalformedUnit): void {
    const key = unit.reason.replace(/\d+/g, 'N').slice(0, 120);
    const d = this.#malformedLog.decide(key);
    if (!d.emit) return;
    this.o.log.warn(
      { sensor: this.o.name, reason: unit.reason, excerpt: unit.excerpt, suppressed: d.suppressed },
      'sensor: malformed input',
    );
  }

  #logCounters(): void {
    this.o.log.info({ sensor: this.o.name, ...this.counters() }, 'sensor: counters');
  }
}
