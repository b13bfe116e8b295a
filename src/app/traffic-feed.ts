import { bootstrapServers, type HamstringConfig } from '../config/index.ts';
import { createProducer } from '../kafka/producer.ts';
import type { Logger } from '../observability/logger.ts';
import { pipelineTopic } from '../stages/index.ts';
import { generateTraffic, type HostTruth, type TrafficOptions } from '../traffic/index.ts';
import { Pacer } from './pacer.ts';

export interface TrafficFeedOptions extends Omit<TrafficOptions, 'startMs'> {
  config: HamstringConfig;
  log: Logger;
  /** Default: the input topic of the first collector's protocol (`hamstring_input-dns`). */
  topic?: string;
  /** Event time of the first line; default now, so the lines' timestamps are live. */
  startMs?: number;
  /** Sends each line when its event time comes (default); false sends as fast as Kafka takes them. */
  paced?: boolean;
}

/** A generator feeding the input topic. */
export interface TrafficFeed {
  readonly topic: string;
  /** Every generated host and what it really is. */
  readonly truth: readonly HostTruth[];
  /** Lines handed to the Kafka producer so far. */
  sent(): number;
  /** Resolves with the lines delivered (sent less failed) when the generator ran out or was stopped. */
  readonly done: Promise<number>;
  /** Stops sending; resolves once what was queued is delivered. */
  stop(): Promise<number>;
  /** Metrics of what the feed runs besides (the resolver demo's sensor), for the dashboard. */
  readonly metrics?: readonly { metrics(): Promise<string> }[];
}

const FLUSH_TIMEOUT_MS = 60_000;

/**
 * Feeds generated DNS traffic (src/traffic) into the pipeline's input topic, each line keyed by its
 * source address. Paced, a line leaves when its event time comes, so `rate` is lines per second of
 * wall-clock time and the alerts can be compared with the generator's truth while it runs.
 */
export async function startTrafficFeed(o: TrafficFeedOptions): Promise<TrafficFeed> {
  const protocol = o.config.pipeline.log_collection.collectors[0]?.protocol_base;
  const topic =
    o.topic ?? (protocol !== undefined ? pipelineTopic(o.config, 'logserver_in', protocol) : undefined);
  if (topic === undefined)
    throw new Error('traffic: pipeline.log_collection.collectors is empty, no input topic');
  const startMs = o.startMs ?? Date.now();
  const traffic = generateTraffic({ ...o, startMs });
  const producer = createProducer(
    {
      bootstrapServers: bootstrapServers(o.config),
      clientId: 'hamstring-traffic',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 60_000,
      apiTimeoutMs: 30_000,
    },
    o.log,
  );
  await producer.connect(30_000);
  const paced = o.paced ?? true;
  let stopped = false;
  let queued = 0;
  const pacer = new Pacer(startMs);

  const run = async (): Promise<number> => {
    try {
      for (const line of traffic.lines()) {
        if (stopped) break;
        if (paced) await pacer.due(line.atMs);
        if (stopped) break;
        await producer.produce({ topic, key: line.srcIp, value: line.line });
        queued += 1;
      }
      await producer.flush(FLUSH_TIMEOUT_MS);
    } finally {
      await producer.close(10_000);
    }
    // flush() returned: every queued line is delivered or failed, and counted.
    const failed = producer.tally().failed;
    if (failed > 0) o.log.warn({ event: 'traffic-failed', failed }, `traffic: ${failed} lines not delivered`);
    return queued - failed;
  };
  const done = run();
  return {
    topic,
    truth: traffic.truth,
    sent: () => queued,
    done,
    stop: () => {
      stopped = true;
      pacer.stop();
      return done;
    },
  };
}
