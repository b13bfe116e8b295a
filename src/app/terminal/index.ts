/** The terminal view of a running pipeline and its end-of-run summary. */
export { startTerminalView } from './terminal-view.ts';
export type { TerminalView, TerminalViewOptions, ViewOutput } from './terminal-view.ts';
export { pipelineSnapshotSource, AlertCursor } from './snapshot.ts';
export type { PipelineSnapshot, SnapshotSource, SnapshotSourceOptions } from './snapshot.ts';
export { summarizeRun, formatSummary, collectRunSummary } from './summary.ts';
export type { GroundTruth, RunSummary, RunSummaryInput, AlertedHost } from './summary.ts';
