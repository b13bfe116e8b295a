import { z } from 'zod';
import { OBSERVATION_FIELDS } from '../sources/dns-observation.ts';
import type { LogLineMapping } from '../sources/log-line.ts';
import { nonEmptyString } from './value-schemas.ts';

const fieldSpecSchema = z.strictObject({
  from: z.enum(OBSERVATION_FIELDS, { error: `one of ${OBSERVATION_FIELDS.join(', ')}` }),
  format: nonEmptyString().optional(),
  suffix: z.string({ error: 'string' }).optional(),
  missing: z.string({ error: 'string' }).optional(),
});

/**
 * `log_line` of a sensor or of the logserver's decoded input: each key of the pipeline's log line
 * names the observation field it takes (`src/sources/log-line.ts`).
 */
export const logLineMappingSchema = z
  .record(nonEmptyString(), fieldSpecSchema, {
    error: 'mapping of line keys to {from, format?, suffix?, missing?}',
  })
  .refine((m) => Object.keys(m).length > 0, { error: 'at least one line key' })
  .transform((m): LogLineMapping => m);
