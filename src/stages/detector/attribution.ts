import type { Alert } from '../messages.ts';
import { domainOf } from './alerts.ts';
import { attributeKind, type DgaModel } from './model/dga-model.ts';

/** How a kind of DGA reads in an alert: the dictionary kind under the name analysts use for it. */
const KIND_LABELS: Readonly<Record<string, string>> = { wordlist: 'dictionary' };

/**
 * The alert with the kind of DGA its names look most like, voted by all of them, and that kind's
 * share of the votes. Each warning carries both as text (`hash DGA (87 %)`), so anything that reads
 * an alert's warnings (the monitoring row's `result`, the dashboard) shows them without a new column.
 */
export function withKind(alert: Alert, model: DgaModel): Alert {
  const names = [...new Set(alert.result.map((w) => domainOf(w.request)).filter((n) => n !== undefined))];
  const vote = attributeKind(model, names);
  if (!vote) return alert;
  const kind = `${KIND_LABELS[vote.kind] ?? vote.kind} DGA`;
  const confidence = Math.round(vote.confidence * 1000) / 1000;
  return {
    ...alert,
    kind,
    kind_confidence: confidence,
    result: alert.result.map((w) => ({ ...w, kind: `${kind} (${Math.round(100 * confidence)} %)` })),
  };
}
