import { resolveListenerTls, type SensorConfig } from '../../config/index.ts';
import type { Logger } from '../../observability/logger.ts';
import type { ObservationSource } from '../../sources/observation-source.ts';
import { DnstapSource } from './dnstap-source.ts';
import { PcapSource } from './pcap-source.ts';

/**
 * Every sensor kind `hamstring sensor <kind>` and `pipeline.sensors` know: how to build its live
 * source from its configuration entry. A new kind is its config schema (src/config/sensors-schema.ts)
 * and one line here; the runner, buffer, metrics and commands are shared.
 */
export interface SensorSource {
  readonly source: ObservationSource;
  /** Kind-specific counters for the metrics endpoint and the periodic log line. */
  readonly extra?: () => Readonly<Record<string, number>>;
}

type KindOf<K extends SensorConfig['kind']> = Extract<SensorConfig, { kind: K }>;
/** `keyPath`: where the entry sits in config.yaml (`pipeline.sensors[2]`), named in its errors. */
type Builders = {
  [K in SensorConfig['kind']]: (
    config: KindOf<K>,
    log: Logger,
    keyPath: readonly PropertyKey[],
  ) => SensorSource;
};

export const SENSOR_KINDS: Builders = {
  dnstap: dnstapSource,
  pcap: pcapSource,
};

type AnyBuilder = (c: SensorConfig, l: Logger, p: readonly PropertyKey[]) => SensorSource;

export function createSensorSource(
  config: SensorConfig,
  log: Logger,
  keyPath: readonly PropertyKey[] = ['pipeline', 'sensors'],
): SensorSource {
  // Each builder takes its own kind's entry; the `kind` lookup guarantees the pairing.
  const build: (c: never, l: Logger, p: readonly PropertyKey[]) => SensorSource = SENSOR_KINDS[config.kind];
  return (build as AnyBuilder)(config, log, keyPath);
}

function dnstapSource(config: KindOf<'dnstap'>, log: Logger, keyPath: readonly PropertyKey[]): SensorSource {
  const d = config.dnstap;
  const tls = d.tls === undefined ? undefined : resolveListenerTls(d.tls, [...keyPath, 'dnstap', 'tls']);
  const source = new DnstapSource({
    listen: {
      ...(d.unix !== undefined ? { unix: d.unix } : {}),
      ...(d.tcp !== undefined ? { tcp: { ...d.tcp, ...(tls !== undefined ? { tls } : {}) } } : {}),
    },
    observe: d.observe,
    pairingCapacity: d.pairing.capacity,
    pairingTimeoutMs: d.pairing.timeout_seconds * 1000,
    maxFrameBytes: d.max_frame_bytes,
    onConnection: (e) =>
      (e.event === 'refused' ? log.warn.bind(log) : log.info.bind(log))(
        { sensor: config.name, peer: e.peer, reason: e.reason },
        `sensor: dnstap connection ${e.event}`,
      ),
  });
  return {
    source,
    extra: () => ({
      ...source.decoderCounters,
      connections: source.connections,
      refused_connections: source.refused,
    }),
  };
}

function pcapSource(config: KindOf<'pcap'>): SensorSource {
  const p = config.pcap;
  const source = new PcapSource({
    ...(p.file !== undefined ? { file: p.file } : {}),
    ...(p.interface !== undefined ? { interface: p.interface } : {}),
    snapLength: p.snap_length,
  });
  return { source, extra: () => source.extra };
}
