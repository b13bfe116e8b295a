/** The processes bench:compare measures, and how each is started. */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startJava } from './java.ts';
import type { RuntimePeerConfig } from './runtime-peer.ts';

export type PeerKind = 'runtime' | 'java-loop' | 'streams';

export interface Peer {
  /** Stable key in the JSON and the ratios. */
  id: string;
  label: string;
  kind: PeerKind;
  mode: 'exactly-once' | 'at-least-once';
  /** runtime: records per consume; java-loop: max.poll.records (one transaction per poll). */
  batchSize?: number;
  /**
   * streams: request a commit after every this many records (with a 9 s commit.interval.ms beside
   * it, for the tail); absent = Streams' default (a commit every 100 ms with EOS).
   */
  streamsCommitEvery?: number;
  /** runtime, exactly-once: the commit interval (one transaction spans the batches of this long). */
  commitIntervalMs?: number;
  /** runtime, exactly-once: the commit interval in records (the spanning committer at a fixed size). */
  commitIntervalRecords?: number;
  /** runtime: librdkafka properties of this peer only, over the run's (an A/B variant). */
  consumerOverrides?: Record<string, string>;
  producerOverrides?: Record<string, string>;
  /** runtime: environment of this peer's process only, e.g. LD_LIBRARY_PATH to another librdkafka build. */
  env?: Record<string, string>;
}

/**
 * Runtime variants measured in the same interleaved run as the rest, so a configuration change is
 * compared under the same machine load: `<id> c:<consumer key>=<v> p:<producer key>=<v> ...`;
 * `e:<NAME>=<v>` sets an environment variable of the peer's process (a client library build to compare).
 */
export function variantPeers(
  spec: string,
  modes: readonly string[],
  commitIntervalMs: number,
  batch = 500,
): Peer[] {
  const [id, ...settings] = spec.trim().split(/\s+/);
  if (!id) throw new Error('--variant wants "<id> c:key=value p:key=value ..."');
  const consumerOverrides: Record<string, string> = {};
  const producerOverrides: Record<string, string> = {};
  const env: Record<string, string> = {};
  for (const s of settings) {
    const m = /^([cpe]):([^=]+)=(.*)$/.exec(s);
    if (!m) throw new Error(`--variant ${id}: expected c:key=value, p:key=value or e:NAME=value, got ${s}`);
    (m[1] === 'c' ? consumerOverrides : m[1] === 'p' ? producerOverrides : env)[m[2]!] = m[3]!;
  }
  return modes.map((mode): Peer => {
    const eos = mode !== 'alo';
    const interval = mode === 'interval' ? commitIntervalMs : undefined;
    // `span`: one batch per transaction, but through the spanning committer, whose commit runs
    // while the next batch is fetched.
    const spanRecords = mode === 'span' ? batch : undefined;
    const kind = mode === 'interval' ? 'eos-interval' : mode === 'span' ? 'eos-span' : mode;
    const what = interval
      ? `, commit interval ${interval} ms`
      : spanRecords
        ? `, commit interval ${spanRecords} records`
        : '';
    return {
      id: `runtime-${kind}@${id}`,
      label: `runtime ${eos ? 'exactly-once' : 'at-least-once'}, batch ${batch}${what}, ${id}`,
      kind: 'runtime',
      mode: eos ? 'exactly-once' : 'at-least-once',
      batchSize: batch,
      ...(interval === undefined ? {} : { commitIntervalMs: interval }),
      ...(spanRecords === undefined ? {} : { commitIntervalRecords: spanRecords }),
      consumerOverrides,
      producerOverrides,
      env,
    };
  });
}

/** What every peer start needs to know about the run. */
export interface PeerRun {
  bootstrap: string;
  classPath: string;
  input: string;
  output: string;
  group: string;
  recordBytes: number;
  /** The runtime's batch.timeoutMs (config.yaml's kafka_transaction_batch.timeout_ms). */
  batchTimeoutMs: number;
  consumerOverrides: Record<string, string>;
  producerOverrides: Record<string, string>;
  stateDir: string;
}

export function defaultPeers(commitIntervalMs: number, batch = 500): Peer[] {
  return [
    {
      id: 'runtime-eos',
      label: `runtime exactly-once, batch ${batch}`,
      kind: 'runtime',
      mode: 'exactly-once',
      batchSize: batch,
    },
    {
      id: 'runtime-eos-interval',
      label: `runtime exactly-once, batch ${batch}, commit interval ${commitIntervalMs} ms`,
      kind: 'runtime',
      mode: 'exactly-once',
      batchSize: batch,
      commitIntervalMs,
    },
    {
      id: 'runtime-alo',
      label: `runtime at-least-once, batch ${batch}`,
      kind: 'runtime',
      mode: 'at-least-once',
      batchSize: batch,
    },
    {
      id: 'java-loop',
      label: `Java loop, ${batch}/txn`,
      kind: 'java-loop',
      mode: 'exactly-once',
      batchSize: batch,
    },
    {
      id: 'streams-eq',
      label: 'Kafka Streams EOS v2, equal txn',
      kind: 'streams',
      mode: 'exactly-once',
      streamsCommitEvery: batch,
    },
    { id: 'streams-default', label: 'Kafka Streams EOS v2, defaults', kind: 'streams', mode: 'exactly-once' },
  ];
}

export function startPeer(peer: Peer, run: PeerRun): ChildProcess {
  const common = { bootstrap: run.bootstrap, input: run.input, output: run.output, group: run.group };
  switch (peer.kind) {
    case 'runtime': {
      const cfg: RuntimePeerConfig = {
        ...common,
        mode: peer.mode,
        batchSize: peer.batchSize ?? 500,
        batchTimeoutMs: run.batchTimeoutMs,
        ...(peer.commitIntervalMs === undefined ? {} : { commitIntervalMs: peer.commitIntervalMs }),
        ...(peer.commitIntervalRecords === undefined
          ? {}
          : { commitIntervalRecords: peer.commitIntervalRecords }),
        consumerOverrides: { ...run.consumerOverrides, ...peer.consumerOverrides },
        producerOverrides: { ...run.producerOverrides, ...peer.producerOverrides },
      };
      return fork(fileURLToPath(new URL('./runtime-peer.ts', import.meta.url)), [], {
        execArgv: ['--import', 'tsx'],
        env: {
          ...process.env,
          ...peer.env,
          HAMSTRING_COMPARE_PEER: JSON.stringify(cfg),
          HAMSTRING_LOG_LEVEL: process.env.HAMSTRING_LOG_LEVEL ?? 'warn',
        },
        stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
      });
    }
    case 'java-loop':
      return startJava(run.classPath, 'CopyLoop', { ...common, 'txn-size': peer.batchSize ?? 500 });
    case 'streams': {
      mkdirSync(run.stateDir, { recursive: true });
      return startJava(run.classPath, 'StreamsPassThrough', {
        ...common,
        'state-dir': run.stateDir,
        ...(peer.streamsCommitEvery === undefined ? {} : { 'commit-every': peer.streamsCommitEvery }),
      });
    }
  }
}
