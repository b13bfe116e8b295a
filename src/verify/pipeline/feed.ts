import { code } from '../../kafka/error-codes.ts';
import { KafkaError } from '../../kafka/kafka-error.ts';
import { createProducer, type ProducerPort } from '../../kafka/producer.ts';
import { silentLogger } from '../../observability/logger.ts';
import { generateTraffic, type HostTruth, type Traffic } from '../../traffic/index.ts';
import { lineMark, markJsonLine } from './line-marks.ts';
import type { InputLine } from './line-fates.ts';

/** What the verifier writes to the logserver's input topic, with what it knows about each line. */
export interface VerifyTraffic {
  readonly lines: readonly (InputLine & { readonly value: string | Buffer })[];
  readonly truth: readonly HostTruth[];
}

export interface TrafficShape {
  readonly seed: number;
  readonly hosts: number;
  /** Lines per second of event time. */
  readonly rate: number;
  readonly durationSeconds: number;
  /** Every n-th line is followed by a hostile one (0: none). */
  readonly hostileEvery: number;
}

/** The event time of the traffic's first second: fixed, so that one seed always gives the same lines. */
const START_MS = Date.UTC(2026, 10, 30, 10);

/**
 * Six kinds of invalid line, each carrying its mark in its first bytes (where a `failed_loglines`
 * row keeps it): not JSON, invalid UTF-8, a wrong type, a missing timestamp, an unparsable address,
 * and one over the collector's `max_line_bytes`.
 */
export function hostileLine(id: number, valid: string): string | Buffer {
  return hostileLineOfKind(id % 6, id, valid);
}

/** {@link hostileLine} of the kind given (0-5 in the order above), whatever the id. */
export function hostileLineOfKind(kind: number, id: number, valid: string): string | Buffer {
  const base = JSON.parse(valid) as Record<string, unknown>;
  const mark = lineMark(id);
  switch (kind) {
    case 0:
      return `{${mark}, this is not JSON`;
    case 1:
      return Buffer.concat([
        Buffer.from(`{${mark},"ts":"`),
        Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
        Buffer.from('"}'),
      ]);
    case 2:
      return markJsonLine(JSON.stringify({ ...base, src_ip: 42 }), id);
    case 3:
      return markJsonLine(JSON.stringify({ ...base, ts: undefined }), id);
    case 4:
      return markJsonLine(JSON.stringify({ ...base, src_ip: 'not-an-address' }), id);
    default:
      return markJsonLine(JSON.stringify({ ...base, padding: 'x'.repeat(20_000) }), id);
  }
}

/** A marked line with the event time of the generated line it is (or follows, when hostile). */
export type TimedLine = InputLine & { readonly value: string | Buffer; readonly atMs: number };

/**
 * The lines of `traffic` as the verifier writes them, lazily: each marked with its id, and a hostile
 * line after every `hostileEvery`-th one.
 */
export function* markedLines(traffic: Traffic, hostileEvery: number): Generator<TimedLine> {
  let id = 0;
  let n = 0;
  for (const g of traffic.lines()) {
    yield { id, valid: true, value: markJsonLine(g.line, id), atMs: g.atMs };
    id += 1;
    n += 1;
    if (hostileEvery > 0 && n % hostileEvery === 0) {
      yield { id, valid: false, value: hostileLine(id, g.line), atMs: g.atMs };
      id += 1;
    }
  }
}

/** The seeded traffic with infected hosts (src/traffic), each line marked, hostile lines mixed in. */
export function verifyTraffic(s: TrafficShape): VerifyTraffic {
  const traffic = generateTraffic({
    seed: s.seed,
    hosts: s.hosts,
    rate: s.rate,
    durationSeconds: s.durationSeconds,
    startMs: START_MS,
  });
  return { lines: [...markedLines(traffic, s.hostileEvery)], truth: traffic.truth };
}

/**
 * Writes the lines to `topic` spread evenly over `spreadMs` (so that every fault meets traffic), with
 * the idempotent producer: a broker killed meanwhile neither loses nor doubles a line. Resolves when
 * every line is delivered.
 * @throws Error when a line could not be delivered: the verdict would blame the pipeline for it.
 */
export async function feedLines(
  bootstrap: string,
  topic: string,
  lines: readonly { readonly value: string | Buffer }[],
  spreadMs: number,
): Promise<void> {
  await feedPaced(bootstrap, topic, lines, (_, i) => (spreadMs * i) / lines.length);
}

/**
 * Writes each line when `dueMs` (after the feed began) has come, as {@link feedLines}; `lines` may be
 * a lazy iterable (a soak's hours of traffic are never held at once). Returns the lines written.
 */
export async function feedPaced<L extends { readonly value: string | Buffer }>(
  bootstrap: string,
  topic: string,
  lines: Iterable<L>,
  dueMs: (line: L, index: number) => number,
): Promise<number> {
  const producer = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'verify-pipeline-feed',
      transactionTimeoutMs: 60_000,
      // Longer than a broker's kill and restart: a line waits for it instead of failing.
      messageTimeoutMs: 300_000,
      apiTimeoutMs: 30_000,
    },
    silentLogger(),
  );
  await producer.connect(60_000);
  let written = 0;
  try {
    const began = Date.now();
    for (const line of lines) {
      const wait = began + dueMs(line, written) - Date.now();
      if (wait > 5) await new Promise((r) => setTimeout(r, wait));
      await produceWaiting(producer, topic, line.value);
      written += 1;
    }
    await producer.flush(330_000);
  } finally {
    await producer.close(10_000);
  }
  const t = producer.tally();
  if (t.failed > 0)
    throw new Error(
      `the feed could not deliver ${t.failed} of ${written} lines: ${JSON.stringify(t.firstError?.toLog())}`,
    );
  return written;
}

const QUEUE_FULL = code('_QUEUE_FULL');
/** As long as a queued line may wait for its delivery (the feed's message timeout). */
const QUEUE_FULL_WAIT_MS = 300_000;

/**
 * Queues one line; while the producer's local queue stays full (a broker down longer than the
 * client's own wait on it, about 10 s, with the lines of that time queued) it keeps waiting: a soak's
 * feed once ended there, 15 minutes in, during a broker restart that took minutes.
 */
async function produceWaiting(producer: ProducerPort, topic: string, value: string | Buffer): Promise<void> {
  const deadline = Date.now() + QUEUE_FULL_WAIT_MS;
  for (;;) {
    try {
      await producer.produce({ topic, key: null, value });
      return;
    } catch (e) {
      if (!(e instanceof KafkaError) || e.code !== QUEUE_FULL || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
