import { silentLogger } from '../../src/observability/logger.ts';
import type { StageContext, StageRecord, TimerContext } from '../../src/runtime/index.ts';
import { MemoryState } from './memory-state.ts';

const log = silentLogger();

/** A StageContext whose stores live in `state` (one MemoryPartitionState per partition). */
export function stageContext(state: MemoryState = new MemoryState()): StageContext {
  return { signal: new AbortController().signal, log, epoch: 1, state: (p) => state.partition(p) };
}

/** A TimerContext for partition `partition` at time `now`. */
export function timerContext(state: MemoryState, partition: number, now: number): TimerContext {
  return {
    signal: new AbortController().signal,
    log,
    epoch: 1,
    partition,
    now,
    state: state.partition(partition),
  };
}

/** An input record as the runtime hands it to a stage. */
export function record(
  topic: string,
  partition: number,
  offset: number,
  value: string | Buffer | null,
  key: string | null = null,
): StageRecord {
  return {
    topic,
    partition,
    offset,
    key: key === null ? null : Buffer.from(key),
    value: typeof value === 'string' ? Buffer.from(value) : value,
    headers: {},
    timestamp: 1_795_996_800_000 + offset,
  };
}
