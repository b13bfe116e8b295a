/**
 * Where a runtime peer's wall time goes (HAMSTRING_COMPARE_TRACE=1): wraps the worker's Kafka ports
 * and times each call by name, then prints one JSON line per call name to stderr when the peer stops.
 * Bench only: the timing wrappers add a few closures per call, nothing per record beyond `produce`.
 */
import type { ConsumerPort } from '../../src/kafka/consumer.ts';
import type { ProducerPort } from '../../src/kafka/producer.ts';
import type { KafkaClientFactory } from '../../src/runtime/worker-options.ts';
import { defaultClients } from '../../src/runtime/kafka-session.ts';

const samples = new Map<string, number[]>();

function note(name: string, ms: number): void {
  let list = samples.get(name);
  if (!list) samples.set(name, (list = []));
  list.push(ms);
}

/** From the start of the first consume that returned records to the end of the last commit. */
const active = { from: 0, to: 0 };

function timed<A extends unknown[], R>(name: string, f: (...a: A) => Promise<R>): (...a: A) => Promise<R> {
  return async (...a: A) => {
    const t = performance.now();
    let label = name;
    try {
      const r = await f(...a);
      // Empty fetches before the assignment and after the input ran dry are idle time, not work.
      if (Array.isArray(r)) {
        if (r.length === 0) label = `${name}-empty`;
        else if (active.from === 0) active.from = t;
      }
      if (name === 'commitTransaction' || name === 'commitOffsets') active.to = performance.now();
      return r;
    } finally {
      note(label, performance.now() - t);
    }
  };
}

const TIMED_PRODUCER = ['beginTransaction', 'sendOffsets', 'commitTransaction', 'abortTransaction', 'flush'];
const TIMED_CONSUMER = ['consume', 'commitOffsets'];

function wrap<T extends object>(port: T, names: string[]): T {
  const p = port as Record<string, unknown>;
  for (const n of names) {
    const f = p[n];
    if (typeof f === 'function') p[n] = timed(n, (f as (...a: unknown[]) => Promise<unknown>).bind(port));
  }
  return port;
}

/** The default clients with their calls timed. */
export const tracedClients: KafkaClientFactory = {
  consumer: (...a) => wrap<ConsumerPort>(defaultClients.consumer(...a), TIMED_CONSUMER),
  producer: (...a) => wrap<ProducerPort>(defaultClients.producer(...a), TIMED_PRODUCER),
};

/** One line per call name: count, total, mean, p50, p90, p99 (ms). */
export function traceSummary(): string {
  const lines: string[] = [];
  for (const [name, list] of samples) {
    const s = [...list].sort((a, b) => a - b);
    const q = (f: number) => s[Math.min(s.length - 1, Math.floor(f * s.length))]!.toFixed(2);
    const total = s.reduce((x, y) => x + y, 0);
    lines.push(
      JSON.stringify({
        trace: name,
        n: s.length,
        totalMs: +total.toFixed(0),
        meanMs: +(total / s.length).toFixed(2),
        p50: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
      }),
    );
  }
  lines.push(JSON.stringify({ trace: 'active', ms: +(active.to - active.from).toFixed(0) }));
  return lines.join('\n') + '\n';
}
