/** The web dashboard: what the app layer (`hamstring up`) and the terminal view use. */
export { startDashboard, dashboardOptionsFromConfig } from './server.ts';
export type { Dashboard, DashboardOptions } from './server.ts';
export type { MetricsSource } from './metrics-source.ts';
export { scrapeSource, workerMetricsSource } from './metrics-source.ts';
export { aggregateStageMetrics, ALERT_CONDITIONS } from './stage-metrics.ts';
export type { StageMetrics } from './stage-metrics.ts';
export type { AlertView } from './alert-view.ts';
export type { DashboardData, Totals } from './dashboard-data.ts';
