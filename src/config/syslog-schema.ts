import { z } from 'zod';
import { intBetween, nonEmptyString, port, positiveInt } from './value-schemas.ts';

/** RFC 5424 facility codes by the names syslog.conf uses. */
export const SYSLOG_FACILITIES = {
  kern: 0,
  user: 1,
  mail: 2,
  daemon: 3,
  auth: 4,
  syslog: 5,
  lpr: 6,
  news: 7,
  uucp: 8,
  cron: 9,
  authpriv: 10,
  ftp: 11,
  ntp: 12,
  security: 13,
  console: 14,
  solaris_cron: 15,
  local0: 16,
  local1: 17,
  local2: 18,
  local3: 19,
  local4: 20,
  local5: 21,
  local6: 22,
  local7: 23,
} as const;

/** RFC 5424 severity codes by name. */
export const SYSLOG_SEVERITIES = {
  emerg: 0,
  alert: 1,
  crit: 2,
  err: 3,
  warning: 4,
  notice: 5,
  info: 6,
  debug: 7,
} as const;

const names = <T extends object>(table: T) =>
  Object.keys(table) as [keyof T & string, ...(keyof T & string)[]];

// RFC 5424 header fields: printable US-ASCII without spaces, bounded in length.
const printable = (max: number, what: string) => {
  const expected = `${what}: 1 to ${max} printable ASCII characters without spaces`;
  return z.string({ error: expected }).regex(new RegExp(`^[\\x21-\\x7e]{1,${max}}$`), { error: expected });
};

// SD-ID: 1-32 printable ASCII characters but "=", "]", '"' and space; "name@<private enterprise number>".
const SD_ID_EXPECTED =
  'structured-data id "name@<enterprise number>" (at most 32 characters, no = ] " or space)';
const sdId = () =>
  z
    .string({ error: SD_ID_EXPECTED })
    .regex(/^[\x21-\x7e]+$/, { error: SD_ID_EXPECTED })
    .regex(/^[^="\]@]+@\d+(?:\.\d+)*$/, { error: SD_ID_EXPECTED })
    .max(32, { error: SD_ID_EXPECTED });

/**
 * `pipeline.alerting.syslog`: each alert of `external_kafka_topic` (so it needs `log_to_kafka`) sent
 * as one RFC 5424 message whose body is the alert in Elastic Common Schema JSON, over UDP (RFC 5426)
 * or TCP with octet-counting framing (RFC 6587), at least once; a send that fails is retried with the
 * `environment.record_errors` back-off, then dead-lettered.
 */
export const syslogSchema = z.strictObject({
  host: nonEmptyString(),
  port: port().default(514),
  transport: z.enum(['udp', 'tcp'], { error: '"udp" or "tcp"' }).default('tcp'),
  facility: z.enum(names(SYSLOG_FACILITIES)).default('local0'),
  severity: z.enum(names(SYSLOG_SEVERITIES)).default('warning'),
  app_name: printable(48, 'APP-NAME').default('hamstring'),
  /** HOSTNAME of the messages; default this machine's host name. */
  hostname: printable(255, 'HOSTNAME').optional(),
  /** The structured-data element's id; 32473 is the enterprise number RFC 5612 reserves for examples. */
  sd_id: sdId().default('hamstring@32473'),
  /** Longest message (bytes, without TCP framing); longer alerts lose their lowest-scoring names. */
  max_message_bytes: intBetween(480, 65_000).default(8192),
  /** TCP: connecting and writing one batch may take this long before it counts as failed. */
  timeout_ms: positiveInt(600_000).default(10_000),
  /**
   * UDP: after a batch, how long to wait for the ICMP "port unreachable" a down receiver answers with
   * (reported on the connected socket); the batch is then sent again.
   */
  udp_error_wait_ms: intBetween(0, 10_000).default(100),
});

export type SyslogConfig = z.output<typeof syslogSchema>;
