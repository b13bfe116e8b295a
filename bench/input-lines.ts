import { bootstrapServers, type HamstringConfig } from '../src/config/index.ts';
import { createProducer } from '../src/kafka/producer.ts';
import type { Logger } from '../src/observability/logger.ts';
import { pipelineTopic } from '../src/stages/index.ts';
import { generateTraffic, type GeneratedLine } from '../src/traffic/index.ts';

/**
 * The throughput phase's input: `count` generated lines (500 hosts, seed 5, event times an hour
 * ago), made in memory first. Generating is far slower than writing: done while the clock ran, it
 * took the machine from the stages it measures. `format` `v2`: as HAMSTRING v2.0.0 writes them.
 */
export function benchLines(count: number, format?: 'v2'): GeneratedLine[] {
  const traffic = generateTraffic({
    seed: 5,
    rate: 2_000,
    durationSeconds: Math.ceil(count / 2_000),
    hosts: 500,
    startMs: Date.now() - 3_600_000,
    ...(format === undefined ? {} : { format }),
  });
  const lines: GeneratedLine[] = [];
  for (const line of traffic.lines()) {
    if (lines.length >= count) break;
    lines.push(line);
  }
  return lines;
}

/** Writes `lines` to the first collector's input topic, keyed by source address; returns how many arrived. */
export async function writeInput(
  config: HamstringConfig,
  lines: readonly GeneratedLine[],
  log: Logger,
): Promise<number> {
  const protocol = config.pipeline.log_collection.collectors[0]!.protocol_base;
  const topic = pipelineTopic(config, 'logserver_in', protocol);
  const producer = createProducer(
    {
      bootstrapServers: bootstrapServers(config),
      clientId: 'bench-input',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 60_000,
      apiTimeoutMs: 30_000,
    },
    log,
  );
  await producer.connect(30_000);
  try {
    // produce() waits only while librdkafka's queue is full; a window of calls keeps it busy.
    const window: Promise<void>[] = [];
    for (const line of lines) {
      window.push(producer.produce({ topic, key: line.srcIp, value: line.line }));
      if (window.length >= 10_000) await Promise.all(window.splice(0));
    }
    await Promise.all(window);
    await producer.flush(60_000);
    return lines.length - producer.tally().failed;
  } finally {
    await producer.close(10_000);
  }
}
