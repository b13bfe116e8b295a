import type { InspectorConfig } from '../../config/index.ts';

/** Microseconds of one numpy time unit (`time_type`). */
const UNIT_MICROS: Readonly<Record<InspectorConfig['time_type'], number>> = {
  ns: 0.001,
  us: 1,
  ms: 1000,
  s: 1_000_000,
  m: 60_000_000,
  h: 3_600_000_000,
  D: 86_400_000_000,
};

/** Width of one bin in microseconds: `time_range` units of `time_type`. */
export function binWidthMicros(timeType: InspectorConfig['time_type'], timeRange: number): number {
  return UNIT_MICROS[timeType] * timeRange;
}

/** A response size such as `331` or `331b` as a number; 0 when it has no leading number. */
export function responseSize(value: unknown): number {
  const size = typeof value === 'number' ? value : typeof value === 'string' ? Number.parseFloat(value) : NaN;
  return Number.isFinite(size) ? size : 0;
}
