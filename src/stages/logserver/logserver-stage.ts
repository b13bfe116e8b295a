import type { CollectorConfig, HamstringConfig } from '../../config/index.ts';
import { MonitoringRowBatch } from '../../monitoring/row-batch.ts';
import type { TableName } from '../../monitoring/tables.ts';
import {
  systemClock,
  type Clock,
  type ProcessResult,
  type RecordPosition,
  type Stage,
  type TimerContext,
} from '../../runtime/index.ts';
import { collectorSettings } from '../collector/collector-settings.ts';
import { DEFAULT_MAX_JSON_DEPTH, withinDepth } from '../collector/line-validation.ts';
import { stableId } from '../ids.ts';
import { LineFramer } from '../line-frames.ts';
import { subnetId, type SubnetPrefixes } from '../subnet.ts';
import { monitoringTopics, pipelineTopic } from '../topics.ts';
import { fileDecoding, type FileDecoding } from './file-decoding.ts';
import type { FilePosition } from './file-position.ts';
import { readNextLines, type FileRead } from './file-reader.ts';

export const LOGSERVER_STAGE = 'log_storage.logserver';
/** The store of the tailed file's position (partition 0 only). */
export const FILE_POSITION_STORE = 'file_position';
const POSITION_KEY = 'position';
/** The decoder memory of a decoded `input_format` (TSV header, queries awaiting answers), kept with the position. */
const DECODER_KEY = 'decoder';

const TABLES: readonly TableName[] = ['server_logs', 'server_logs_timestamps', 'failed_loglines'];
const MAX_TEXT = 4096;

export interface LogserverStageOptions {
  readonly config: HamstringConfig;
  readonly clock?: Clock;
  readonly monitoringTopicPrefix?: string;
  /** How often the input file is polled. Default 250 ms. */
  readonly fileIntervalMs?: number;
  /** Most bytes read from the file per timer call. Default 1 MiB. */
  readonly fileChunkBytes?: number;
}

interface Target {
  readonly topic: string;
  readonly subnet: SubnetPrefixes;
  readonly maxLineBytes: number;
}

/**
 * The logserver: forwards each line of `<logserver_in>-<protocol>` unchanged to every collector of
 * that protocol (`<logserver_to_collector>-<collector>`), keyed by the line's subnet under that
 * collector's prefix lengths so that a subnet's lines always reach the same collector partition; a
 * line whose `src_ip` does not parse goes on unkeyed and fails in the collector, where it is recorded.
 * A call's lines of one collector and key leave as one record (a frame, see line-frames.ts).
 *
 * With `pipeline.log_storage.logserver.input_file` it also tails that file from its timer, on the
 * instance that owns input partition 0; file lines go to every collector. The file position lives in
 * the `file_position` store and commits with the lines' outputs (exactly once).
 */
export function createLogserverStage(options: LogserverStageOptions): Stage {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const prefix = options.monitoringTopicPrefix;
  const collectors = config.pipeline.log_collection.collectors;
  const byProtocol = new Map<string, Target[]>();
  for (const collector of collectors) {
    const targets = byProtocol.get(collector.protocol_base) ?? [];
    targets.push(target(config, collector));
    byProtocol.set(collector.protocol_base, targets);
  }
  const inputTopics = [...byProtocol.keys()].map((protocol) =>
    pipelineTopic(config, 'logserver_in', protocol),
  );
  const protocolOf = new Map(
    [...byProtocol.keys()].map((protocol) => [pipelineTopic(config, 'logserver_in', protocol), protocol]),
  );
  const allTargets = [...byProtocol.values()].flat();
  const inputFile = config.pipeline.log_storage.logserver.input_file;
  const decoding = fileDecoding(config.pipeline.log_storage.logserver);
  const chunk = options.fileChunkBytes ?? 1024 * 1024;

  /** The line to each target; its two monitoring rows go to `rows`. `attach`: outputs name `source`. */
  function forward(
    value: Buffer,
    source: RecordPosition,
    targets: readonly Target[],
    times: { now: number; timestampIn: number; attach: boolean },
    rows: MonitoringRowBatch,
    out: LineFramer,
  ): void {
    const { now, timestampIn, attach } = times;
    let longest = 0;
    for (const t of targets) if (t.maxLineBytes > longest) longest = t.maxLineBytes;
    const srcIp = sourceAddress(value, longest);
    for (const t of targets) {
      const key = srcIp === undefined ? null : (subnetId(srcIp, t.subnet) ?? null);
      out.add(t.topic, key, value, attach ? source : undefined);
    }
    const messageId = stableId('server_log', source.topic, source.partition, source.offset);
    rows.add('server_logs', source, 0, {
      message_id: messageId,
      timestamp_in: timestampIn,
      message_text: value.subarray(0, MAX_TEXT).toString('utf8'),
    });
    rows.add('server_logs_timestamps', source, 0, {
      message_id: messageId,
      event: 'timestamp_out',
      event_timestamp: now,
    });
  }

  const stage: Stage = {
    name: LOGSERVER_STAGE,
    shortName: 'logserver',
    inputTopics,
    outputTopics: [...new Set(allTargets.map((t) => t.topic)), ...monitoringTopics(TABLES, prefix)],
    process(records): ProcessResult {
      const framer = new LineFramer();
      const rows = new MonitoringRowBatch(prefix);
      for (const record of records) {
        const targets = byProtocol.get(protocolOf.get(record.topic) ?? '') ?? [];
        const now = clock.now();
        const value = record.value ?? Buffer.alloc(0);
        const times = { now, timestampIn: record.timestamp ?? now, attach: true };
        forward(value, record, targets, times, rows, framer);
      }
      const outputs = framer.outputs();
      outputs.push(...rows.outputs());
      return { outputs };
    },
  };
  if (inputFile === undefined) return stage;
  return {
    ...stage,
    stores: { [FILE_POSITION_STORE]: {} },
    timer: { intervalMs: options.fileIntervalMs ?? 250 },
    async onTimer(ctx: TimerContext): Promise<ProcessResult> {
      if (ctx.partition !== 0) return { outputs: [] };
      const store = ctx.state.store<unknown>(FILE_POSITION_STORE);
      const stored = store.get(POSITION_KEY) as FilePosition | undefined;
      const read = await readNextLines(inputFile, stored, chunk);
      if (!read) return { outputs: [] };
      const framer = new LineFramer();
      const rows = new MonitoringRowBatch(prefix);
      const times = { now: ctx.now, timestampIn: ctx.now, attach: false };
      if (decoding) {
        const input = { path: inputFile, read, stored, saved: store.get(DECODER_KEY) };
        const send = (bytes: Buffer, source: RecordPosition) =>
          forward(bytes, source, allTargets, times, rows, framer);
        store.put(DECODER_KEY, forwardDecoded(decoding, input, send, rows, ctx.now));
      } else {
        const topic = `file:${inputFile}@${read.file.dev}:${read.file.ino}`;
        for (const line of read.lines) {
          const source = { topic, partition: 0, offset: line.offset };
          forward(line.bytes, source, allTargets, times, rows, framer);
        }
      }
      const outputs = framer.outputs();
      outputs.push(...rows.outputs());
      store.put(POSITION_KEY, read.position);
      return { outputs };
    },
  };
}

/**
 * Decodes a read of a Zeek or Suricata file: each log line goes to `send` named by the row it came
 * from; a row that does not decode is recorded in `failed_loglines` with its reason. Returns the
 * decoder memory to store with the new position.
 */
function forwardDecoded(
  decoding: FileDecoding,
  input: { path: string; read: FileRead; stored: FilePosition | undefined; saved: unknown },
  send: (bytes: Buffer, source: RecordPosition) => void,
  rows: MonitoringRowBatch,
  now: number,
): unknown {
  const { path, read, stored, saved } = input;
  const { position, file } = read;
  const newFile = stored === undefined || stored.dev !== position.dev || stored.ino !== position.ino;
  const result = decoding.decode(read.lines, {
    saved,
    file: `${path}@${file.dev}:${file.ino}`,
    newFile,
    atEnd: position.offset >= file.size,
  });
  for (const item of result.items) {
    const source = { topic: `file:${item.origin.file}`, partition: 0, offset: item.origin.offset };
    if (item.kind === 'line') send(item.bytes, source);
    else
      rows.add('failed_loglines', source, 0, {
        message_text: item.text.slice(0, MAX_TEXT),
        timestamp_in: now,
        timestamp_failed: now,
        reason_for_failure: item.reason,
      });
  }
  return result.saved;
}

function target(config: HamstringConfig, collector: CollectorConfig): Target {
  return {
    topic: pipelineTopic(config, 'logserver_to_collector', collector.name),
    subnet: collectorSettings(config, collector).subnet,
    maxLineBytes: collector.max_line_bytes,
  };
}

/** `src_ip` of a line the collector could accept; `undefined` for anything else (sent unkeyed). */
export function sourceAddress(value: Buffer, maxLineBytes: number): string | undefined {
  if (value.length === 0 || value.length > maxLineBytes) return undefined;
  const text = value.toString('utf8');
  if (!withinDepth(text, DEFAULT_MAX_JSON_DEPTH)) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    const address =
      typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).src_ip : undefined;
    return typeof address === 'string' ? address : undefined;
  } catch {
    return undefined;
  }
}
