import { bootstrapServers, type HamstringConfig, type SensorConfig } from '../../config/index.ts';
import { createProducer } from '../../kafka/producer.ts';
import type { Logger } from '../../observability/logger.ts';
import { httpLimitsFromConfig } from '../../runtime/http-guard.ts';
import { pipelineTopic } from '../../stages/index.ts';
import { createSensorSource } from './kinds.ts';
import { sensorRegistry, serveMetrics } from './sensor-metrics.ts';
import { SensorRunner, type SensorCounters } from './sensor-runner.ts';
import { zeekSensorConfigs } from './zeek-sensors.ts';

/** A configured sensor, running. */
export interface RunningSensor {
  readonly runner: SensorRunner;
  readonly topic: string;
  /** Its counters as Prometheus metrics (the dashboard reads them in process). */
  readonly registry: { metrics(): Promise<string> };
  /** The metrics endpoint's port, when `metrics_port` is set. */
  readonly metricsPort?: number;
  stop(): Promise<SensorCounters>;
}

/**
 * The logserver input topic a sensor writes to: `<logserver_in>-<protocol>`, the protocol being the
 * sensor's own or the first collector's `protocol_base`.
 */
export function sensorTopic(config: HamstringConfig, sensor: SensorConfig): string {
  const protocol = sensor.protocol ?? config.pipeline.log_collection.collectors[0]?.protocol_base;
  if (protocol === undefined)
    throw new Error(`pipeline.sensors.${sensor.name}: no protocol and no collector to take one from`);
  return pipelineTopic(config, 'logserver_in', protocol);
}

/** How long librdkafka keeps retrying a line while Kafka is unreachable before counting it failed. */
const MESSAGE_TIMEOUT_MS = 120_000;

export async function startSensor(
  config: HamstringConfig,
  sensor: SensorConfig,
  log: Logger,
): Promise<RunningSensor> {
  const topic = sensorTopic(config, sensor);
  const index = config.pipeline.sensors.indexOf(sensor);
  const { source, extra } = createSensorSource(
    sensor,
    log,
    index >= 0 ? ['pipeline', 'sensors', index] : ['pipeline', 'sensors'],
  );
  const producer = createProducer(
    {
      bootstrapServers: bootstrapServers(config),
      clientId: `hamstring-sensor-${sensor.name}`,
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: MESSAGE_TIMEOUT_MS,
      apiTimeoutMs: 30_000,
      // The producer's queue is the second half of the sensor's bound (see sensor-buffer.ts).
      overrides: { 'queue.buffering.max.messages': sensor.buffer.capacity },
    },
    log,
  );
  const runner = new SensorRunner({
    name: sensor.name,
    source,
    mapping: sensor.log_line,
    topic,
    producer,
    buffer: { capacity: sensor.buffer.capacity, maxPauseMs: sensor.buffer.max_pause_seconds * 1000 },
    log,
    logIntervalMs: sensor.log_interval_seconds * 1000,
  });
  await runner.start();
  const target = {
    name: sensor.name,
    kind: sensor.kind,
    counters: () => runner.counters(),
    ...(extra ? { extra } : {}),
  };
  const registry = sensorRegistry(() => [target]);
  const metrics =
    sensor.metrics_port === undefined
      ? undefined
      : await serveMetrics(registry, sensor.metrics_port, httpLimitsFromConfig(config.endpoints));
  return {
    runner,
    topic,
    registry,
    ...(metrics !== undefined ? { metricsPort: metrics.port } : {}),
    async stop() {
      await metrics?.close();
      return runner.stop();
    },
  };
}

/**
 * Every `pipeline.sensors` entry and every `pipeline.zeek.sensors` entry (as pcap sensors); when one
 * cannot start, those already started are stopped.
 */
export async function startSensors(config: HamstringConfig, log: Logger): Promise<RunningSensor[]> {
  const started: RunningSensor[] = [];
  try {
    for (const sensor of [...config.pipeline.sensors, ...zeekSensorConfigs(config)])
      started.push(await startSensor(config, sensor, log));
    return started;
  } catch (e) {
    await Promise.allSettled(started.map((s) => s.stop()));
    throw e;
  }
}
