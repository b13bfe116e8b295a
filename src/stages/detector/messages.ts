import { z } from 'zod';

/*
 * The detector's view of the messages it reads and writes, in the reference's shapes (Batch from
 * the inspector, Alert to the alerter). Lines keep every field they carry.
 */

const loglineSchema = z.looseObject({
  logline_id: z.string().optional(),
  ts: z.string(),
  src_ip: z.string(),
  domain_name: z.string(),
});

/** One DNS log line inside a batch (extra fields pass through). */
export type Logline = z.infer<typeof loglineSchema>;

export const batchSchema = z.looseObject({
  batch_tree_row_id: z.string().optional(),
  batch_id: z.string(),
  begin_timestamp: z.string().optional(),
  end_timestamp: z.string().optional(),
  data: z.array(loglineSchema),
});

/** A suspicious batch: one subnet's (or, after the inspector, one host's) lines. */
export type Batch = z.infer<typeof batchSchema>;

/** One request the detector found malicious, with its score. */
export interface Warning {
  readonly logline_id?: string;
  readonly ts: string;
  readonly domain_name: string;
  /** Malicious probability (DGA) or tunnelling score (Domainator), 0..1. */
  readonly probability: number;
  /** Extra evidence (Domainator: the window's subdomains). */
  readonly evidence?: Record<string, unknown>;
}

/**
 * The reference's Alert, plus `alert_id`: a stable id derived from the detector, the suspicious
 * batch and the host, so every replay of the same batch yields the same id and sinks can drop
 * what they already hold.
 */
export interface Alert {
  readonly alert_id: string;
  readonly overall_score: number;
  readonly result: readonly Warning[];
  readonly src_ip: string;
  readonly alert_timestamp: string;
  readonly suspicious_batch_id: string;
  readonly detector_name: string;
}

const warningSchema = z.looseObject({
  logline_id: z.string().optional(),
  ts: z.string(),
  domain_name: z.string(),
  probability: z.number(),
  evidence: z.record(z.string(), z.unknown()).optional(),
});

export const alertSchema = z.looseObject({
  alert_id: z.string().min(1),
  overall_score: z.number(),
  result: z.array(warningSchema),
  src_ip: z.string(),
  alert_timestamp: z.string(),
  suspicious_batch_id: z.string(),
  detector_name: z.string(),
});
