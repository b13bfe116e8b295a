import { isIP } from 'node:net';
import { z } from 'zod';

// Each builder passes its own `error` so that every failure of the value (wrong type, out of
// range) reports the same "expected" phrase; ConfigError prints it after "expected".

export const positiveInt = (max?: number) => {
  const expected = max === undefined ? 'positive integer' : `integer between 1 and ${max}`;
  const base = z.int({ error: expected }).positive({ error: expected });
  return max === undefined ? base : base.max(max, { error: expected });
};

export const intBetween = (min: number, max: number) => {
  const expected = `integer between ${min} and ${max}`;
  return z.int({ error: expected }).min(min, { error: expected }).max(max, { error: expected });
};

export const positiveNumber = () => z.number({ error: 'number > 0' }).positive({ error: 'number > 0' });

export const fraction = () => {
  const expected = 'number between 0 and 1';
  return z.number({ error: expected }).min(0, { error: expected }).max(1, { error: expected });
};

export const nonEmptyString = () =>
  z.string({ error: 'non-empty string' }).trim().min(1, { error: 'non-empty string' });

export const port = () => intBetween(1, 65535);

export const DOMAIN_NAME_EXPECTED = 'domain name of letters, digits and hyphens, e.g. "corp.example.com"';
/** A DNS name as a config names a zone: lower-cased, without a trailing dot. */
export const domainName = () =>
  z
    .string({ error: DOMAIN_NAME_EXPECTED })
    .regex(
      /^(?=.{1,253}\.?$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/,
      {
        error: DOMAIN_NAME_EXPECTED,
      },
    )
    .transform((name) => name.toLowerCase().replace(/\.$/, ''));

const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;
export const TOPIC_NAME_EXPECTED = 'Kafka topic name (letters, digits, ".", "_", "-"; at most 249)';

export const topicName = () =>
  z.string({ error: TOPIC_NAME_EXPECTED }).regex(TOPIC_NAME, { error: TOPIC_NAME_EXPECTED });

// Component names become topic suffixes (`pipeline-inspector_to_detector-<name>`).
export const COMPONENT_NAME_EXPECTED = 'name usable in a topic name (letters, digits, ".", "_", "-")';

export const componentName = () =>
  z.string({ error: COMPONENT_NAME_EXPECTED }).regex(TOPIC_NAME, { error: COMPONENT_NAME_EXPECTED });

// Stage names become consumer group ids and transactional ids, and in the pipeline topic suffixes.
export const STAGE_NAME_EXPECTED = 'stage name (letters, digits, ".", "_", "-")';

/** A key of a per-stage section: any stage's full or short name, built-in or a user's own. */
export const stageName = () =>
  z.string({ error: STAGE_NAME_EXPECTED }).regex(TOPIC_NAME, { error: STAGE_NAME_EXPECTED });

export const ipAddress = () =>
  z.string({ error: 'IPv4 or IPv6 address' }).refine((value) => isIP(value) !== 0, {
    error: 'IPv4 or IPv6 address',
  });

export const BOOTSTRAP_SERVERS_EXPECTED = 'comma-separated host:port list, e.g. "kafka1:9092,kafka2:9092"';

const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

/** `" a:1 , b:2 "` -> `"a:1,b:2"`; `undefined` when any entry is not `host:port`. */
export function normalizeBootstrapServers(text: string): string | undefined {
  const entries = text.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const match = HOST_PORT.exec(entry);
    const portNumber = Number(match?.[2]);
    if (!match || portNumber < 1 || portNumber > 65535) return undefined;
  }
  return entries.join(',');
}

export const bootstrapServerList = () =>
  z
    .string({ error: BOOTSTRAP_SERVERS_EXPECTED })
    .refine((text) => normalizeBootstrapServers(text) !== undefined, { error: BOOTSTRAP_SERVERS_EXPECTED })
    .transform((text) => normalizeBootstrapServers(text) ?? text);

/** Free-form keyword arguments handed to a model; YAML's empty value (`model_args:`) means none. */
export const modelArgs = () =>
  z
    .record(z.string(), z.unknown(), { error: 'mapping of model arguments' })
    .nullish()
    .transform((args) => args ?? {});
