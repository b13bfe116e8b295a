import { bootstrapServers, type HamstringConfig } from '../config/index.ts';
import { ensureMonitoringTopics } from '../monitoring/topics.ts';
import type { Logger } from '../observability/logger.ts';
import type { Stage } from '../runtime/index.ts';
import { drainMonitoringAgent, type DrainResult } from '../monitoring/agent-drain.ts';
import { AT_LEAST_ONCE_KINDS, buildComponentStage } from './builtin-stages.ts';
import {
  startMonitoringAgent,
  type MonitoringAgent,
  type MonitoringAgentOptions,
} from './monitoring-agent.ts';
import { pipelineComponents, type PipelineComponent } from '../stages/pipeline-components.ts';
import { runStages, type RunningStages } from './run-stages.ts';
import { StageResources } from './stage-resources.ts';
import { createStageTopics } from './stage-topics.ts';
import { startSensors, type RunningSensor } from './sensors/start-sensor.ts';
import { createLogger } from '../observability/logger.ts';

export interface StartPipelineOptions {
  config: HamstringConfig;
  /** Partitions of the topics created here (existing topics are left as they are). Default 3. */
  partitions?: number;
  /** Threads scoring DGA domains off the event loop; default min(2, cores). */
  scoringThreads?: number;
  /** Default: runStages' JSON logger. */
  log?: Logger;
  env?: NodeJS.ProcessEnv;
  /** Options of the monitoring agent (the ClickHouse database, its group); default from the config. */
  agent?: Pick<MonitoringAgentOptions, 'database' | 'groupId' | 'instanceId'>;
}

/** Every configured stage and the monitoring agent, running in this process. */
export interface RunningPipeline {
  readonly components: readonly PipelineComponent[];
  readonly stages: RunningStages;
  readonly agent: MonitoringAgent;
  /** The configured `pipeline.sensors`, feeding the logserver's input (started after the stages). */
  readonly sensors: readonly RunningSensor[];
  /** Every topic the stages read or write (created if missing). */
  readonly topics: readonly string[];
  /** Resolves when every stage worker has stopped; true when one failed. */
  readonly done: Promise<boolean>;
  /** Stops the stage workers (their last transactions commit); the agent keeps running. */
  stopStages(): Promise<void>;
  /**
   * Waits until the agent has put every monitoring row written so far into ClickHouse (after
   * `stopStages`, that is all of them), at most `timeoutMs`.
   */
  drainAgent(o: { timeoutMs: number; signal?: AbortSignal }): Promise<DrainResult>;
  /** Stops the stages first (their last transactions commit), then the agent, then the shared resources. */
  stop(): Promise<void>;
}

/**
 * Starts the whole pipeline in one process: creates the missing pipeline, monitoring and
 * dead-letter topics, starts the monitoring agent (which waits for ClickHouse), then one exactly-once
 * worker per configured component (at least once for the webhook sink), DGA scoring in a thread
 * pool. Signals are left to the caller, which decides what else stops with the pipeline.
 */
export async function startPipeline(o: StartPipelineOptions): Promise<RunningPipeline> {
  const { config } = o;
  const partitions = o.partitions ?? 3;
  const components = pipelineComponents(config);
  const resources = new StageResources(o.scoringThreads);
  const atLeastOnce = new Set<string>();
  const stages: Stage[] = [];
  let agent: MonitoringAgent | undefined;
  try {
    for (const component of components) {
      const stage = await buildComponentStage(config, component.kind, {
        component: component.name,
        resources,
      });
      if (AT_LEAST_ONCE_KINDS.has(component.kind)) atLeastOnce.add(stage.name);
      stages.push(stage);
    }
    const topics = await createStageTopics(config, stages, { partitions });
    await ensureMonitoringTopics(bootstrapServers(config), { partitions });
    agent = await startMonitoringAgent(config, { ...o.agent, ...(o.log ? { log: o.log } : {}) });
    const running = await runStages({
      config,
      stages,
      atLeastOnce,
      signals: [],
      ...(o.log ? { log: o.log } : {}),
      ...(o.env ? { env: o.env } : {}),
    });
    const sensors = await startSensors(config, o.log ?? createLogger()).catch(async (e: unknown) => {
      await running.stop();
      throw e;
    });
    const started = agent;
    let stoppingStages: Promise<void> | undefined;
    let stopping: Promise<void> | undefined;
    // Sensors stop first: what they hold reaches the input topic while the stages still run.
    const stopStages = () =>
      (stoppingStages ??= Promise.all(sensors.map((s) => s.stop())).then(() => running.stop()));
    const stopAll = async () => {
      await stopStages();
      await started.stop();
      await resources.close();
    };
    return {
      components,
      stages: running,
      agent: started,
      sensors,
      topics,
      done: running.done,
      stopStages,
      drainAgent: (d) =>
        drainMonitoringAgent({
          bootstrap: bootstrapServers(config),
          ...(o.agent?.groupId !== undefined ? { groupId: o.agent.groupId } : {}),
          ...d,
        }),
      stop: () => (stopping ??= stopAll()),
    };
  } catch (e) {
    await agent?.stop();
    await resources.close();
    throw e;
  }
}
