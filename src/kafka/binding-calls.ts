import { randomBytes } from 'node:crypto';
import Kafka from '@confluentinc/kafka-javascript';
import type {
  GlobalConfig,
  KafkaConsumer,
  LibrdKafkaError,
  Message,
  Metadata,
  Producer,
} from '@confluentinc/kafka-javascript';
import type { KafkaSecurity } from '../config/index.ts';
import { connectionProperties } from './security.ts';
import { watchCredentials } from './refusal.ts';

/**
 * Promise wrappers of the binding's callback calls, for code that talks to the cluster directly
 * rather than through the runtime's ports (readiness probes, cluster tooling).
 */

export function baseConfig(bootstrap: string, role: string, security?: KafkaSecurity): GlobalConfig {
  return {
    ...connectionProperties(bootstrap, `hamstring-${role}`, security),
    // Brokers that are starting or restarting: retry connections quickly rather than backing off to 10 s.
    'reconnect.backoff.ms': 100,
    'reconnect.backoff.max.ms': 1000,
  };
}

/** Connects; refused credentials (TLS, SASL) reject at once with an `authorization` error. */
export function connect(client: Producer | KafkaConsumer, timeoutMs: number): Promise<Metadata> {
  const credentials = watchCredentials(client);
  return credentials.guard(callback<Metadata>((cb) => client.connect({ timeout: timeoutMs }, cb)));
}

export function getMetadata(
  client: Producer | KafkaConsumer,
  opts: { allTopics: boolean; timeout: number },
): Promise<Metadata> {
  return callback<Metadata>((cb) => {
    client.getMetadata(opts, cb);
  });
}

export function consume(consumer: KafkaConsumer, max: number): Promise<Message[]> {
  return callback<Message[]>((cb) => consumer.consume(max, cb));
}

/** Disconnects, but never waits more than 10 s: a client talking to a dead cluster can hang in close. */
export function disconnect(client: Producer | KafkaConsumer): Promise<void> {
  if (!client.isConnected()) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 10_000);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    if (isProducer(client)) client.disconnect(5000, done);
    else client.disconnect(done);
  });
}

export function isProducer(client: Producer | KafkaConsumer): client is Producer {
  return client instanceof Kafka.Producer;
}

export function callback<T = void>(
  start: (cb: (err: LibrdKafkaError | null | undefined, value: T) => void) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    start((err, value) => (err ? reject(toError(err)) : resolve(value)));
  });
}

export function toError(err: LibrdKafkaError | Error): Error {
  if (err instanceof Error) return err;
  return Object.assign(new Error(err.message), { code: err.code });
}

export function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${randomBytes(6).toString('hex')}`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
