/**
 * A StateEngine on fakes (an admin that knows one two-partition input, a changelog reader the test
 * releases, a settable clock), for unit tests of the engine and of what drives it.
 */
import { Registry } from 'prom-client';
import type { AdminPort, TopicSpec } from '../../src/kafka/admin.ts';
import type { ChangelogReader } from '../../src/kafka/changelog-reader.ts';
import type { FetchedRecord } from '../../src/kafka/records.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { Clock } from '../../src/runtime/clock.ts';
import { StateEngine } from '../../src/runtime/state/state-engine.ts';

/** Two input partitions, their changelogs missing: prepare creates them (and records that it did). */
export function fakeAdmin(created: string[]): AdminPort {
  return {
    listTopics: () => Promise.resolve(['in']),
    watermarks: () =>
      Promise.resolve([
        { partition: 0, low: 0, high: 0 },
        { partition: 1, low: 0, high: 0 },
      ]),
    createTopics: (specs: TopicSpec[]) => {
      created.push(...specs.map((s) => s.topic));
      return Promise.resolve();
    },
    partitionCounts: (topics: readonly string[]) =>
      Promise.resolve(new Map(topics.filter((t) => created.includes(t)).map((t) => [t, 2]))),
  } as unknown as AdminPort;
}

/** A changelog of one record per partition, whose reads wait until `release()`. */
export function gatedReader() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reader: ChangelogReader = {
    watermarks: (tps) => Promise.resolve(tps.map((tp) => ({ ...tp, low: 0, high: 1 }))),
    async read(ranges, onRecords, signal) {
      await gate;
      signal?.throwIfAborted();
      const records: FetchedRecord[] = ranges.map((r) => ({
        topic: r.topic,
        partition: r.partition,
        offset: 0,
        key: Buffer.from('k'),
        value: Buffer.from(String(r.partition + 10)),
        headers: {},
        timestamp: undefined,
      }));
      onRecords(records);
      return new Map(ranges.map((r) => [`${r.topic}:${r.partition}`, 1]));
    },
    close: () => Promise.resolve(),
  };
  return { reader, release };
}

export function clockAt(now: { t: number }): Clock {
  return { now: () => now.t, sleep: () => Promise.resolve() };
}

export async function engineWith(
  root: string,
  reader: ChangelogReader,
  now: { t: number },
  instance: string,
) {
  const created: string[] = [];
  const e = new StateEngine({
    stage: { name: 's', inputTopics: ['in'], stores: { counts: {} }, timer: { intervalMs: 100 } },
    groupId: 'g',
    instanceId: instance,
    bootstrapServers: 'unused:9092',
    settings: { dir: root, replicationFactor: 1 },
    apiTimeoutMs: 1_000,
    clock: clockAt(now),
    log: silentLogger(),
    registry: new Registry(),
    openReader: () => Promise.resolve(reader),
  });
  await e.prepare(fakeAdmin(created));
  return { e, created };
}
