import Kafka from '@confluentinc/kafka-javascript';
import { classifyKafkaError } from './classify.ts';
import { connectionProperties } from './security.ts';
import { watchCredentials, type CredentialsWatch } from './refusal.ts';

const call = <T>(fn: (cb: (err: unknown, v: T) => void) => void) =>
  new Promise<T>((resolve, reject) =>
    fn((err, v) => (err ? reject(classifyKafkaError(err, 'admin')) : resolve(v))),
  );

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The admin's reads of cluster metadata (partition counts, watermarks), through a producer client:
 * the Admin API has neither. Connected on first use; a connect that failed (Kafka away) is tried
 * again by the next call, not remembered.
 */
export class MetadataClient {
  readonly #client: Kafka.Producer;
  readonly #credentials: CredentialsWatch;
  #ready: Promise<void> | undefined;

  constructor(bootstrapServers: string, clientId: string) {
    this.#client = new Kafka.Producer(connectionProperties(bootstrapServers, clientId));
    this.#credentials = watchCredentials(this.#client);
  }

  /**
   * `call` unless this client's credentials are refused first. The Admin API client reports no log
   * lines, so the admin guards its calls with this client's (connected by {@link warmUp}).
   */
  guard<T>(call: Promise<T>): Promise<T> {
    return this.#credentials.guard(call);
  }

  /** Starts connecting now, so that refused credentials are seen while an admin call waits. */
  warmUp(): void {
    this.#connected(CONNECT_TIMEOUT_MS).catch(() => undefined);
  }

  /**
   * A call's timeout bounds its connect too (at most {@link CONNECT_TIMEOUT_MS}): with Kafka away a
   * 1 s metadata call otherwise waited out the whole connect timeout before it failed.
   */
  #connected(timeoutMs: number): Promise<void> {
    this.#ready ??= this.#credentials
      .guard(
        new Promise<void>((resolve, reject) =>
          this.#client.connect({ timeout: Math.min(timeoutMs, CONNECT_TIMEOUT_MS) }, (err) =>
            err ? reject(classifyKafkaError(err, 'admin')) : resolve(),
          ),
        ),
      )
      .catch((e: unknown) => {
        this.#ready = undefined;
        throw e;
      });
    return this.#ready;
  }

  async metadata(opts: { topic?: string; timeout: number }): Promise<Kafka.Metadata> {
    await this.#connected(opts.timeout);
    return call<Kafka.Metadata>((cb) => {
      this.#client.getMetadata(opts, cb);
    });
  }

  /** Low and high watermark per partition of a topic, in partition order. */
  async watermarks(
    topic: string,
    timeoutMs: number,
  ): Promise<{ partition: number; low: number; high: number }[]> {
    const md = await this.metadata({ topic, timeout: timeoutMs });
    const t = md.topics.find((x) => x.name === topic);
    if (!t) throw new Error(`topic ${topic} not found`);
    const out: { partition: number; low: number; high: number }[] = [];
    for (const p of [...t.partitions].sort((a, b) => a.id - b.id)) {
      const w = await call<Kafka.WatermarkOffsets>((cb) => {
        this.#client.queryWatermarkOffsets(topic, p.id, timeoutMs, cb);
      });
      out.push({ partition: p.id, low: w.lowOffset, high: w.highOffset });
    }
    return out;
  }

  close(): void {
    // Only a connected client is disconnected: the binding releases one whose connect failed
    // itself, and disconnecting it again throws ("Producer not connected"), as it does for a client
    // the binding released after a broker outage.
    void this.#ready?.then(
      () => {
        try {
          this.#client.disconnect();
        } catch {
          // Already released.
        }
      },
      () => undefined,
    );
  }
}
