import type { Batch, LogLine } from '../../../src/stages/messages.ts';

/** A log line as the collector writes it (ts at `second` past midnight, microsecond ISO). */
export function line(id: string, second: number, fields: Record<string, unknown> = {}): LogLine {
  const whole = Math.floor(second);
  const micros = Math.round((second - whole) * 1e6);
  const ts = `2026-11-30T00:${String(Math.floor(whole / 60)).padStart(2, '0')}:${String(whole % 60).padStart(2, '0')}.${String(micros).padStart(6, '0')}Z`;
  return {
    logline_id: id,
    subnet_id: '10.2.54.0_24',
    ts,
    src_ip: '10.2.54.7',
    status_code: 'NXDOMAIN',
    record_type: 'A',
    size: '100b',
    domain_name: 'example.org',
    ...fields,
  };
}

export function batch(data: LogLine[], contextIds?: string[]): Batch {
  return {
    batch_tree_row_id: 'row-1',
    batch_id: 'batch-1',
    begin_timestamp: data[0]?.ts ?? '',
    end_timestamp: data[data.length - 1]?.ts ?? '',
    data,
    ...(contextIds ? { context_logline_ids: contextIds } : {}),
  };
}
