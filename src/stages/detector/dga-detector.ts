import { resolve } from 'node:path';
import { MonitoringRowBatch } from '../../monitoring/row-batch.ts';
import { warningWindowSettings, type DetectorConfig } from '../../config/index.ts';
import {
  RecordError,
  type ProcessResult,
  type Stage,
  type StageOutput,
  type ThreadPool,
} from '../../runtime/index.ts';
import { domainOf, ownLines, type ScoredLine } from './alerts.ts';
import { decodeBatch, type Batch } from '../messages.ts';
import {
  DETECTOR_STAGE,
  detectorOutputs,
  detectorOutputTopics,
  type DetectorTopics,
} from './detector-outputs.ts';
import { withKind } from './attribution.ts';
import { scoreNames, type DgaModel } from './model/dga-model.ts';
import { loadDgaModel } from './model/model-file.ts';
import type { ScoreTask } from './score-task.ts';
import { windowRules } from './spread-group.ts';
import {
  dropIdleHosts,
  WARNING_WINDOWS_STORE,
  windowAlerts,
  type StoredHostWindows,
} from './window-alerts.ts';

export { DETECTOR_MONITORING_TABLES, DETECTOR_STAGE } from './detector-outputs.ts';

export interface DgaDetectorOptions {
  /** One entry of `pipeline.data_analysis` with `detector_class_name: DGADetector`. */
  readonly detector: DetectorConfig;
  readonly topics: DetectorTopics;
  /** Scores off the event loop when given (see `DGA_SCORE_TASK_MODULE`); inline otherwise. */
  readonly pool?: ThreadPool;
  readonly instanceName?: string;
  readonly clock?: () => number;
}

/** The model file of a DGA detector entry: `model_path`, else `models/<model>.json`. */
export function modelPathOf(detector: DetectorConfig): string {
  return resolve(detector.model_path ?? `models/${detector.model ?? 'dga-gbt'}.json`);
}

/**
 * Builds the DGA detector stage. Loads the model first and refuses to build when the file's
 * SHA-256 is not the configured `checksum` (the error names both), so a worker never starts with
 * a model nobody vetted.
 */
export async function createDgaDetector(o: DgaDetectorOptions): Promise<Stage> {
  const { detector } = o;
  const modelPath = modelPathOf(detector);
  const checksum = detector.checksum;
  if (checksum === undefined) throw new Error(`detector ${detector.name}: no checksum configured`);
  const model = await loadDgaModel(modelPath, checksum);
  return dgaDetectorStage({ ...o, model, modelPath, checksum });
}

/**
 * The stage around an already loaded and checked model (tests and `createDgaDetector`). A host is
 * alerted when its warnings reach `min_warnings` distinct names within one event-time window
 * (`warning-window.ts`): the windows live per host in a state store, so warnings of earlier batches
 * count, and they survive restarts and rebalances with the input offsets; a timer drops hosts idle
 * for `warning_idle_timeout_seconds`.
 */
export function dgaDetectorStage(
  o: DgaDetectorOptions & { model: DgaModel; modelPath: string; checksum: string },
): Stage {
  const clock = o.clock ?? Date.now;
  const instanceName = o.instanceName ?? o.detector.name;
  const windows = warningWindowSettings(o.detector);
  const rules = windowRules(windows, o.detector.threshold);
  return {
    name: DETECTOR_STAGE,
    shortName: 'detector',
    inputTopics: [o.topics.input],
    outputTopics: detectorOutputTopics(o.topics),
    stores: { [WARNING_WINDOWS_STORE]: {} },
    timer: { intervalMs: Math.max(1000, Math.min(windows.idleTimeoutMs / 4, 60_000)) },
    async process(records, ctx): Promise<ProcessResult> {
      const outputs: StageOutput[] = [];
      const rows = new MonitoringRowBatch(o.topics.monitoringPrefix);
      const failures: ProcessResult['failures'] = [];
      const decoded: { record: (typeof records)[number]; batch: Batch; lines: ScoredLine['line'][] }[] = [];
      for (const record of records) {
        try {
          const batch = decodeBatch(record.value);
          decoded.push({ record, batch, lines: ownLines(batch) });
        } catch (e) {
          failures.push({ record, error: e });
        }
      }
      // One scoring call per Kafka batch: one thread hop instead of one per record.
      const domains = decoded.flatMap(({ lines }) => lines.map((l) => domainOf(l) ?? ''));
      const task: ScoreTask = { modelPath: o.modelPath, checksum: o.checksum, domains };
      const scores = o.pool
        ? await o.pool.run<ScoreTask, number[]>(task, ctx.signal)
        : scoreNames(o.model, domains);
      let at = 0;
      for (const { record, batch, lines } of decoded) {
        // A line without a name gets no score (0): nothing to classify.
        const scored: ScoredLine[] = lines.map((line) => {
          const score = scores[at++] ?? 0;
          return { line, score: domainOf(line) === undefined ? 0 : score };
        });
        const now = clock();
        try {
          const store = ctx.state(record.partition).store<StoredHostWindows>(WARNING_WINDOWS_STORE);
          const found = windowAlerts(store, scored, {
            settings: rules,
            detectorName: o.detector.name,
            suspiciousBatchId: batch.batch_id,
            now,
          });
          const alerts = found.map((alert) => (alert.kind === undefined ? withKind(alert, o.model) : alert));
          outputs.push(
            ...detectorOutputs({
              source: record,
              batch,
              scored,
              detector: o.detector,
              topics: o.topics,
              instanceName,
              now,
              rows,
              alerts,
            }),
          );
        } catch (e) {
          throw new RecordError(record, e);
        }
      }
      outputs.push(...rows.outputs());
      return { outputs, failures };
    },
    onTimer(ctx): ProcessResult {
      dropIdleHosts(
        ctx.state.store<StoredHostWindows>(WARNING_WINDOWS_STORE),
        ctx.now,
        windows.idleTimeoutMs,
      );
      return { outputs: [] };
    },
  };
}
