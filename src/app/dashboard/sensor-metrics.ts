import type { PromSample } from './prometheus-text.ts';

/** One sensor's counters as its `/metrics` (or in-process registry) reports them. */
export interface SensorMetrics {
  sensor: string;
  kind: string;
  received: number;
  malformed: number;
  ignored: number;
  forwarded: number;
  dropped: number;
  failed: number;
  pending: number;
}

const COUNTERS = ['received', 'malformed', 'ignored', 'forwarded', 'dropped', 'failed'] as const;

/**
 * The `hamstring_sensor_*` series of every scraped source per `sensor` label (a sensor reports from
 * one process, so its series are taken as they are), by name.
 */
export function aggregateSensorMetrics(samples: readonly PromSample[]): SensorMetrics[] {
  const sensors = new Map<string, SensorMetrics>();
  for (const s of samples) {
    const sensor = s.labels.sensor;
    if (sensor === undefined || !s.name.startsWith('hamstring_sensor_') || !Number.isFinite(s.value))
      continue;
    let m = sensors.get(sensor);
    if (!m) {
      m = {
        sensor,
        kind: s.labels.kind ?? '',
        received: 0,
        malformed: 0,
        ignored: 0,
        forwarded: 0,
        dropped: 0,
        failed: 0,
        pending: 0,
      };
      sensors.set(sensor, m);
    }
    const field = s.name.slice('hamstring_sensor_'.length);
    if (field === 'pending_lines') m.pending = s.value;
    for (const c of COUNTERS) if (field === `${c}_total`) m[c] = s.value;
  }
  return [...sensors.values()].sort((a, b) => a.sensor.localeCompare(b.sensor));
}
