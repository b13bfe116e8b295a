import type { StatsSource } from './stranded-client.ts';

/**
 * What a producer's latest statistics report (every 2 s) says about its transaction protocol: its
 * producer id and epoch, and how many requests of each kind it sent, summed over its brokers
 * (librdkafka's own names: `Produce`, `AddPartitionsToTxn`, `AddOffsetsToTxn`, `TxnOffsetCommit`,
 * `EndTxn`, ...). With transaction protocol version 2 the epoch grows by one at every transaction end
 * and no AddPartitionsToTxn or AddOffsetsToTxn is sent.
 */
export interface ProducerProtocolStats {
  producerId: number;
  producerEpoch: number;
  requests: Readonly<Record<string, number>>;
}

interface RawStats {
  eos?: { producer_id?: number; producer_epoch?: number };
  brokers?: Record<string, { req?: Record<string, number> }>;
}

export function parseProducerProtocolStats(statsJson: string): ProducerProtocolStats | undefined {
  let raw: RawStats;
  try {
    raw = JSON.parse(statsJson) as RawStats;
  } catch {
    return undefined;
  }
  if (!raw.eos) return undefined;
  const requests: Record<string, number> = {};
  for (const broker of Object.values(raw.brokers ?? {}))
    for (const [api, n] of Object.entries(broker.req ?? {})) requests[api] = (requests[api] ?? 0) + n;
  return { producerId: raw.eos.producer_id ?? -1, producerEpoch: raw.eos.producer_epoch ?? -1, requests };
}

/** Keeps the latest report's protocol figures of an idempotent or transactional producer. */
export function watchProtocolStats(native: StatsSource): () => ProducerProtocolStats | undefined {
  let latest: ProducerProtocolStats | undefined;
  native.on('event.stats', (event) => {
    latest = parseProducerProtocolStats(event.message) ?? latest;
  });
  return () => latest;
}
