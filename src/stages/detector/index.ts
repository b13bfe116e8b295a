/**
 * The detector stages: what the application layer builds from `pipeline.data_analysis`.
 */
import type { DetectorConfig, HamstringConfig } from '../../config/index.ts';
import type { Stage, ThreadPool } from '../../runtime/index.ts';
import { createDgaDetector } from './dga-detector.ts';
import { createDomainator } from './domainator/domainator.ts';
import { detectorTopics } from './topics.ts';

export { createDgaDetector, dgaDetectorStage, modelPathOf, DETECTOR_STAGE } from './dga-detector.ts';
export { createDomainator } from './domainator/domainator.ts';
export { DGA_SCORE_TASK_MODULE } from './score-task.ts';
export { ModelChecksumError } from './model/model-file.ts';
export { detectorTopics } from './topics.ts';
export { alertId, median, ownLines } from './alerts.ts';

export interface DetectorStageOptions {
  /** DGA scoring off the event loop: a pool made with `DGA_SCORE_TASK_MODULE`. */
  readonly pool?: ThreadPool;
  /** Names this instance in monitoring rows; default the detector's name. */
  readonly instanceName?: string;
}

/**
 * The stage of one `pipeline.data_analysis` entry, by its `detector_class_name`. A DGA detector
 * loads its model first and rejects (ModelChecksumError) when the file is not the configured one.
 */
export async function createDetectorStage(
  config: HamstringConfig,
  detector: DetectorConfig,
  o: DetectorStageOptions = {},
): Promise<Stage> {
  const topics = detectorTopics(config, detector);
  const common = {
    detector,
    topics,
    ...(o.instanceName !== undefined ? { instanceName: o.instanceName } : {}),
  };
  switch (detector.detector_class_name) {
    case 'DGADetector':
      return createDgaDetector({ ...common, ...(o.pool ? { pool: o.pool } : {}) });
    case 'DomainatorDetector':
      return createDomainator(common);
  }
}
