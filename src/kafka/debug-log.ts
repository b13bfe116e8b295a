import type Kafka from '@confluentinc/kafka-javascript';

/**
 * librdkafka's own debug output, for diagnosing a client that misbehaves in the field:
 * HAMSTRING_KAFKA_DEBUG takes librdkafka's `debug` contexts (e.g. `cgrp,metadata,broker`) and every
 * client of the process then writes its debug lines to stderr as JSON, tagged with its client id.
 * It bypasses the process logger on purpose: the checking side (verifier, tests) runs its readers
 * with a silent logger, and those are the clients one most needs to see.
 */
export function librdkafkaDebugContexts(): string | undefined {
  const contexts = process.env.HAMSTRING_KAFKA_DEBUG?.trim();
  return contexts ? contexts : undefined;
}

interface LogEvent {
  severity?: number;
  fac?: string;
  message?: string;
}

export function attachDebugLog(native: Kafka.KafkaConsumer | Kafka.Producer, clientId: string): void {
  if (librdkafkaDebugContexts() === undefined) return;
  (native as Kafka.Producer).on('event.log', (e: LogEvent) => {
    const line = { time: new Date().toISOString(), kafkaDebug: clientId, fac: e.fac, msg: e.message };
    process.stderr.write(`${JSON.stringify(line)}\n`);
  });
}
