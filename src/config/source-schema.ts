import { z } from 'zod';
import { logLineMappingSchema } from './log-line-mapping-schema.ts';
import { addProblem } from './refinements.ts';
import { componentName, nonEmptyString, positiveInt } from './value-schemas.ts';

/**
 * Not in the Python config: what the logserver's `input_file` holds and how its rows become log
 * lines. `hamstring` (the default) forwards each line as it is; the others decode each row into a
 * DNS observation and write it as a log line under `log_line` (each key of the line names the
 * observation field it takes; the default is the shipped collector's keys and formats).
 */
export const INPUT_FORMATS = ['hamstring', 'zeek-tsv', 'zeek-json', 'suricata-eve'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

export const logserverSchema = z.strictObject({
  input_file: nonEmptyString().optional(),
  input_format: z.enum(INPUT_FORMATS, { error: `one of ${INPUT_FORMATS.join(', ')}` }).default('hamstring'),
  /** Line key -> observation field; only for a decoded `input_format`. */
  log_line: logLineMappingSchema.optional(),
  /** `suricata-eve`: queries kept waiting for their answer, at most this many ... */
  max_pending_queries: positiveInt(100_000).default(1000),
  /** ... and at most this long (seconds of the events' own clock). */
  pair_window_seconds: positiveInt(3600).default(5),
});

const PROTOCOLS = ['dns', 'http'] as const;

/**
 * `pipeline.zeek.sensors.<name>` as Python HAMSTRING writes it: with `static_analysis` the sensor
 * reads the pcap files of a directory (`static_files_dir`, ours: Python takes it from the
 * container's mount), otherwise it captures on `interfaces`; `protocols` lists what it reports
 * (only `dns` is decoded here; `http` is accepted and ignored with a warning at start).
 */
const zeekSensorSchema = z
  .strictObject({
    static_analysis: z.boolean({ error: 'true or false' }).default(false),
    static_files_dir: nonEmptyString().optional(),
    interfaces: z.array(nonEmptyString(), { error: 'list of interface names' }).default([]),
    protocols: z
      .array(z.enum(PROTOCOLS, { error: `one of ${PROTOCOLS.join(', ')}` }), { error: 'list of protocols' })
      .default(['dns']),
  })
  .superRefine((sensor, ctx) => {
    if (sensor.static_analysis && sensor.static_files_dir === undefined)
      addProblem(
        ctx,
        ['static_files_dir'],
        'a directory of pcap files when static_analysis is true',
        undefined,
      );
    if (!sensor.static_analysis && sensor.interfaces.length === 0)
      addProblem(
        ctx,
        ['interfaces'],
        'at least one interface when static_analysis is false',
        sensor.interfaces,
      );
  });

export const zeekSchema = z.strictObject({
  sensors: z.record(componentName(), zeekSensorSchema).default({}),
});
export type ZeekSensorConfig = z.infer<typeof zeekSensorSchema>;
