/**
 * The pipeline's topics as the line accounting walks them, derived from a loaded config: where a
 * line enters, which collector reads it, and every chain collector -> prefilter -> inspector ->
 * detector -> alerters it can travel. Pure data, so the accounting (line-fates.ts) needs no config.
 */
import type { HamstringConfig } from '../../config/index.ts';
import { detectorTopics } from '../../stages/detector/index.ts';
import { pipelineTopic } from '../../stages/index.ts';

/** One chain a collector's batches go down: each of its prefilters, inspectors and detectors. */
export interface PathLayout {
  /** `collector/prefilter/inspector/detector`: how the report names the path. */
  readonly name: string;
  readonly prefilter: string;
  readonly inspector: string;
  readonly detector: string;
  /** The collector's batches to this prefilter (`batch_sender_to_prefilter-<prefilter>`). */
  readonly prefilterInput: string;
  /** `prefilter_to_inspector-<inspector>`. */
  readonly inspectorInput: string;
  /** `inspector_to_detector-<detector>`: the suspicious batches. */
  readonly detectorInput: string;
  /** `detector_to_alerter-<alerter>` of each alerter the detector sends to, and the alerter's name. */
  readonly alerterInputs: readonly { readonly alerter: string; readonly topic: string }[];
  /** Whether the alerter may drop or change alerts (a plugin): then an alert need not leave it. */
  readonly alertersAdjust: boolean;
}

export interface CollectorLayout {
  readonly name: string;
  /** `logserver_to_collector-<collector>`: the lines the logserver forwarded, a record or a frame of them. */
  readonly input: string;
  readonly paths: readonly PathLayout[];
}

export interface PipelineLayout {
  /** `logserver_in-<protocol>` of every protocol a collector reads: the lines as they came in. */
  readonly logserverInputs: readonly string[];
  readonly collectors: readonly CollectorLayout[];
  /** `external_kafka_topic` when the alerters write alerts to Kafka (`log_to_kafka`). */
  readonly externalAlerts: string | undefined;
}

/**
 * The layout of `config`. A prefilter without an inspector, an inspector without a detector, is no
 * path: its lines could have no fate past it, and the shipped config has none.
 */
export function pipelineLayout(config: HamstringConfig): PipelineLayout {
  const pipeline = config.pipeline;
  const pluginAlerters = new Set(pipeline.alerting.plugins.map((p) => p.name));
  const collectors = pipeline.log_collection.collectors.map((collector): CollectorLayout => {
    const paths: PathLayout[] = [];
    for (const prefilter of pipeline.log_filtering.filter((p) => p.collector_name === collector.name))
      for (const inspector of pipeline.data_inspection.filter((i) => i.prefilter_name === prefilter.name))
        for (const detector of pipeline.data_analysis.filter((d) => d.inspector_name === inspector.name)) {
          const topics = detectorTopics(config, detector);
          const alerterInputs = detector.produce_topics.map((alerter) => ({
            alerter,
            topic: pipelineTopic(config, 'detector_to_alerter', alerter),
          }));
          paths.push({
            name: `${collector.name}/${prefilter.name}/${inspector.name}/${detector.name}`,
            prefilter: prefilter.name,
            inspector: inspector.name,
            detector: detector.name,
            prefilterInput: pipelineTopic(config, 'batch_sender_to_prefilter', prefilter.name),
            inspectorInput: pipelineTopic(config, 'prefilter_to_inspector', inspector.name),
            detectorInput: topics.input,
            alerterInputs,
            alertersAdjust: detector.produce_topics.some((a) => pluginAlerters.has(a)),
          });
        }
    return {
      name: collector.name,
      input: pipelineTopic(config, 'logserver_to_collector', collector.name),
      paths,
    };
  });
  const protocols = [...new Set(pipeline.log_collection.collectors.map((c) => c.protocol_base))];
  return {
    logserverInputs: protocols.map((protocol) => pipelineTopic(config, 'logserver_in', protocol)),
    collectors,
    externalAlerts: pipeline.alerting.log_to_kafka ? pipeline.alerting.external_kafka_topic : undefined,
  };
}

/** Every topic of the layout that carries batches or alerts, each once. */
export function layoutTopics(layout: PipelineLayout): {
  lines: string[];
  batches: string[];
  alerts: string[];
  outgoing: string[];
} {
  const paths = layout.collectors.flatMap((c) => c.paths);
  const unique = (topics: string[]) => [...new Set(topics)];
  return {
    lines: unique([...layout.logserverInputs, ...layout.collectors.map((c) => c.input)]),
    batches: unique(paths.flatMap((p) => [p.prefilterInput, p.inspectorInput, p.detectorInput])),
    alerts: unique(paths.flatMap((p) => p.alerterInputs.map((a) => a.topic))),
    outgoing: layout.externalAlerts === undefined ? [] : [layout.externalAlerts],
  };
}
