import type { DetectorConfig, HamstringConfig } from '../../config/index.ts';
import type { DetectorTopics } from './detector-outputs.ts';

/**
 * A detector's topics as the Python system names them: it reads
 * `<inspector_to_detector>-<detector name>` and writes `<detector_to_alerter>-<alerter>` for each
 * alerter of `produce_topics`.
 */
export function detectorTopics(config: HamstringConfig, detector: DetectorConfig): DetectorTopics {
  const prefixes = config.environment.kafka_topics_prefix.pipeline;
  return {
    input: `${prefixes.inspector_to_detector}-${detector.name}`,
    alerts: detector.produce_topics.map((alerter) => `${prefixes.detector_to_alerter}-${alerter}`),
  };
}
