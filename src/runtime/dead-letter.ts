import type { StageOutput, StageRecord } from './stage.ts';

/** Header names of a dead letter; `hamstring dlt replay` reads them back. */
export const DLT_HEADERS = {
  topic: 'hamstring.dlt.original.topic',
  partition: 'hamstring.dlt.original.partition',
  offset: 'hamstring.dlt.original.offset',
  timestamp: 'hamstring.dlt.original.timestamp',
  key: 'hamstring.dlt.original.key',
  group: 'hamstring.dlt.group',
  stage: 'hamstring.dlt.stage',
  errorKind: 'hamstring.dlt.error.kind',
  errorClass: 'hamstring.dlt.error.class',
  errorMessage: 'hamstring.dlt.error.message',
  errorStack: 'hamstring.dlt.error.stack',
  attempts: 'hamstring.dlt.attempts',
  firstFailure: 'hamstring.dlt.first.failure',
  lastFailure: 'hamstring.dlt.last.failure',
} as const;

const STACK_LIMIT = 2_000;

export interface DeadLetterInfo {
  group: string;
  stage: string;
  errorKind: string;
  error: unknown;
  attempts: number;
  firstFailure: number;
  lastFailure: number;
}

/** The dead letter of `record`: its key and value unchanged, the why in headers. */
export function deadLetterOf(record: StageRecord, topic: string, info: DeadLetterInfo): StageOutput {
  const err = info.error instanceof Error ? info.error : new Error(String(info.error));
  const headers: Record<string, Buffer | string> = {
    ...record.headers,
    [DLT_HEADERS.topic]: record.topic,
    [DLT_HEADERS.partition]: String(record.partition),
    [DLT_HEADERS.offset]: String(record.offset),
    [DLT_HEADERS.timestamp]: String(record.timestamp ?? ''),
    [DLT_HEADERS.group]: info.group,
    [DLT_HEADERS.stage]: info.stage,
    [DLT_HEADERS.errorKind]: info.errorKind,
    [DLT_HEADERS.errorClass]: err.name,
    [DLT_HEADERS.errorMessage]: err.message,
    [DLT_HEADERS.errorStack]: (err.stack ?? '').slice(0, STACK_LIMIT),
    [DLT_HEADERS.attempts]: String(info.attempts),
    [DLT_HEADERS.firstFailure]: new Date(info.firstFailure).toISOString(),
    [DLT_HEADERS.lastFailure]: new Date(info.lastFailure).toISOString(),
  };
  if (record.key !== null) headers[DLT_HEADERS.key] = record.key;
  return { topic, key: record.key, value: record.value, headers };
}
