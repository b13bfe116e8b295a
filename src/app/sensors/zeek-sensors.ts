import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sensorSchema, type HamstringConfig, type SensorConfig } from '../../config/index.ts';

/**
 * Python HAMSTRING's `pipeline.zeek.sensors.<name>` as pcap sensors, so `hamstring up` runs them
 * like `pipeline.sensors`: with `static_analysis`, one per `.pcap` file of `static_files_dir` (read
 * once, named `<name>-<n>` in file-name order); otherwise one live capture per interface
 * (`<name>-<interface>`). Only `dns` of `protocols` is decoded; a sensor without it gives none.
 */
export function zeekSensorConfigs(config: HamstringConfig): SensorConfig[] {
  const out: SensorConfig[] = [];
  for (const [name, sensor] of Object.entries(config.pipeline.zeek?.sensors ?? {})) {
    if (!sensor.protocols.includes('dns')) continue;
    if (sensor.static_analysis) {
      const dir = sensor.static_files_dir ?? '';
      let files: string[];
      try {
        files = readdirSync(dir)
          .filter((f) => f.toLowerCase().endsWith('.pcap'))
          .sort();
      } catch (e) {
        throw new Error(
          `pipeline.zeek.sensors.${name}.static_files_dir: cannot read the directory ${dir} (${(e as Error).message})`,
        );
      }
      files.forEach((file, i) =>
        out.push(
          sensorSchema.parse({ name: `${name}-${i + 1}`, kind: 'pcap', pcap: { file: join(dir, file) } }),
        ),
      );
    } else
      for (const iface of sensor.interfaces)
        out.push(sensorSchema.parse({ name: `${name}-${iface}`, kind: 'pcap', pcap: { interface: iface } }));
  }
  return out;
}
