import type Kafka from '@confluentinc/kafka-javascript';
import { classifyKafkaError } from './classify.ts';
import { code } from './error-codes.ts';
import type { DeliveryReports } from './producer-deliveries.ts';
import type { OutgoingRecord } from './records.ts';

const QUEUE_FULL = code('_QUEUE_FULL');
const MSG_SIZE_TOO_LARGE = code('MSG_SIZE_TOO_LARGE');

const size = (v: Buffer | string | null | undefined): number =>
  v === null || v === undefined ? 0 : Buffer.isBuffer(v) ? v.length : Buffer.byteLength(v);

const toBuf = (v: Buffer | string | null | undefined): Buffer | null =>
  v === null || v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(v);

/**
 * Bytes of key, value and headers: what the size limits count, without the batch overhead. Key and
 * value come as the bytes produced, so a string is encoded once, not once more to be measured.
 */
function producedBytes(r: OutgoingRecord, key: Buffer | null, value: Buffer | null): number {
  let n = size(key) + size(value);
  if (r.headers) for (const [k, v] of Object.entries(r.headers)) n += Buffer.byteLength(k) + size(v);
  return n;
}

/**
 * Queues one record (ProducerPort.produce): waits while the local queue is full, and turns a
 * record the client refuses into a `refused` KafkaError naming it.
 */
export async function sendRecord(
  native: Kafka.Producer,
  reports: DeliveryReports,
  record: OutgoingRecord,
  messageMaxBytes: number,
): Promise<void> {
  const headers = record.headers
    ? Object.entries(record.headers).map(([k, v]) => ({
        [k]: typeof v === 'string' ? Buffer.from(v) : v,
      }))
    : undefined;
  const key = toBuf(record.key);
  const value = toBuf(record.value);
  const opaque = reports.next(producedBytes(record, key, value));
  for (let attempt = 0; ; attempt += 1) {
    try {
      native.produce(
        record.topic,
        record.partition ?? null,
        value,
        key,
        record.timestamp ?? null,
        opaque,
        headers,
      );
      reports.produced();
      return;
    } catch (e) {
      const err = classifyKafkaError(e, 'produce');
      if (err.kind === 'refused') {
        const ref = { topic: record.topic, partition: record.partition ?? -1, ...opaque };
        const why =
          err.code === MSG_SIZE_TOO_LARGE
            ? `, larger than the producer's message.max.bytes (${messageMaxBytes})`
            : '';
        throw err.about(
          { topic: ref.topic, partition: ref.partition, index: ref.index, bytes: ref.bytes },
          `the client refused record ${ref.index} of the transaction for topic ${ref.topic} (${ref.bytes} bytes${why})`,
        );
      }
      if (err.code !== QUEUE_FULL || attempt > 2_000) throw err;
      // The local queue drains as deliveries complete; wait instead of failing the transaction.
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
