import { registerSecret } from '../errors/secrets.ts';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, formatPath, makeIssue, type ConfigIssue } from './errors.ts';
import { addProblem, asRecord } from './refinements.ts';
import { nonEmptyString } from './value-schemas.ts';
import { parseWithSchema } from './zod-issues.ts';

/**
 * `environment.kafka_security`: how every Kafka client of the project authenticates and encrypts.
 * Secrets never sit in the file: the SASL password comes from KAFKA_SASL_PASSWORD or a file
 * (`sasl.password_file`, KAFKA_SASL_PASSWORD_FILE), the key password from KAFKA_SSL_KEY_PASSWORD or
 * `key_password_file`. {@link resolveKafkaSecurity} reads them when a client is about to be made.
 */

export const KAFKA_SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export const KAFKA_SASL_MECHANISMS = ['SCRAM-SHA-256', 'SCRAM-SHA-512', 'PLAIN'] as const;
export type KafkaSecurityProtocol = (typeof KAFKA_SECURITY_PROTOCOLS)[number];
export type KafkaSaslMechanism = (typeof KAFKA_SASL_MECHANISMS)[number];

const PROTOCOL_EXPECTED = `one of ${KAFKA_SECURITY_PROTOCOLS.join(', ')}`;
const MECHANISM_EXPECTED = `one of ${KAFKA_SASL_MECHANISMS.join(', ')}`;

/** Environment variables of the Kafka security settings (the password ones never enter the tree). */
export const KAFKA_SECURITY_ENV = {
  protocol: 'KAFKA_SECURITY_PROTOCOL',
  mechanism: 'KAFKA_SASL_MECHANISM',
  username: 'KAFKA_SASL_USERNAME',
  password: 'KAFKA_SASL_PASSWORD',
  passwordFile: 'KAFKA_SASL_PASSWORD_FILE',
  caFile: 'KAFKA_SSL_CA_FILE',
  keyPassword: 'KAFKA_SSL_KEY_PASSWORD',
} as const;

const saslSchema = z.strictObject({
  mechanism: z.enum(KAFKA_SASL_MECHANISMS, { error: MECHANISM_EXPECTED }).default('SCRAM-SHA-512'),
  username: nonEmptyString(),
  /** A file holding the password (one line); KAFKA_SASL_PASSWORD wins over it. */
  password_file: nonEmptyString().optional(),
});

const SSL_KEYS = ['ca_file', 'certificate_file', 'key_file', 'key_password_file'] as const;

export const kafkaSecuritySchema = z
  .strictObject({
    protocol: z.enum(KAFKA_SECURITY_PROTOCOLS, { error: PROTOCOL_EXPECTED }).default('PLAINTEXT'),
    /** PEM file of the CA(s) that signed the brokers' certificates; omitted: the system's store. */
    ca_file: nonEmptyString().optional(),
    /** Whether the broker's certificate must name the host connected to (librdkafka's default: yes). */
    verify_hostname: z.boolean({ error: 'true or false' }).default(true),
    /** Client certificate and key (PEM) for brokers that require TLS client authentication. */
    certificate_file: nonEmptyString().optional(),
    key_file: nonEmptyString().optional(),
    key_password_file: nonEmptyString().optional(),
    sasl: saslSchema.optional(),
  })
  .superRefine((value, ctx) => {
    const s = asRecord(value);
    const protocol = typeof s?.protocol === 'string' ? s.protocol : 'PLAINTEXT';
    const usesSasl = protocol.startsWith('SASL_');
    const usesTls = protocol === 'SSL' || protocol === 'SASL_SSL';
    if (usesSasl && s?.sasl === undefined)
      addProblem(ctx, ['sasl'], `a sasl section (mechanism, username) for protocol ${protocol}`, undefined);
    if (!usesSasl && s?.sasl !== undefined)
      addProblem(ctx, ['protocol'], 'SASL_PLAINTEXT or SASL_SSL when a sasl section is set', protocol);
    for (const key of SSL_KEYS) {
      if (!usesTls && s?.[key] !== undefined)
        addProblem(ctx, ['protocol'], `SSL or SASL_SSL when ${key} is set`, protocol);
    }
    if ((s?.certificate_file === undefined) !== (s?.key_file === undefined)) {
      const missing = s?.certificate_file === undefined ? 'certificate_file' : 'key_file';
      addProblem(ctx, [missing], 'a PEM file (certificate_file and key_file go together)', undefined);
    }
  });

export type KafkaSecurityConfig = z.output<typeof kafkaSecuritySchema>;

/** The resolved settings every Kafka client is made with (secrets read, paths as given). */
export interface KafkaSecurity {
  protocol: KafkaSecurityProtocol;
  caFile?: string;
  verifyHostname: boolean;
  certificateFile?: string;
  keyFile?: string;
  keyPassword?: string;
  sasl?: { mechanism: KafkaSaslMechanism; username: string; password: string };
}

export const PLAINTEXT_SECURITY: KafkaSecurity = Object.freeze({
  protocol: 'PLAINTEXT',
  verifyHostname: true,
});

const SECTION = ['environment', 'kafka_security'];

function readSecret(file: string, path: readonly string[], source: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? (error.message.split(', ')[0] ?? error.message) : String(error);
    throw new ConfigError(source, [
      makeIssue({ path: formatPath(path), expected: 'a readable file', value: file, note: reason }),
    ]);
  }
  const secret = text.replace(/\r?\n$/, '');
  if (secret === '')
    throw new ConfigError(source, [
      makeIssue({
        path: formatPath(path),
        expected: 'a file holding the secret',
        value: file,
        note: 'empty',
      }),
    ]);
  return secret;
}

function envText(env: NodeJS.ProcessEnv, variable: string): string | undefined {
  const text = env[variable];
  return text === undefined || text === '' ? undefined : text;
}

/**
 * The settings of `section` with their secrets: the SASL password from KAFKA_SASL_PASSWORD, else
 * from the password file; the key password likewise. A SASL protocol without any password source is
 * an error naming the key to set.
 *
 * @throws {@link ConfigError}
 */
export function resolveKafkaSecurity(
  section: KafkaSecurityConfig | undefined,
  env: NodeJS.ProcessEnv = process.env,
  source = 'config.yaml',
): KafkaSecurity {
  if (section === undefined) return PLAINTEXT_SECURITY;
  const out: KafkaSecurity = { protocol: section.protocol, verifyHostname: section.verify_hostname };
  if (section.ca_file !== undefined) out.caFile = section.ca_file;
  if (section.certificate_file !== undefined) out.certificateFile = section.certificate_file;
  if (section.key_file !== undefined) out.keyFile = section.key_file;
  const keyPassword =
    envText(env, KAFKA_SECURITY_ENV.keyPassword) ??
    (section.key_password_file === undefined
      ? undefined
      : readSecret(section.key_password_file, [...SECTION, 'key_password_file'], source));
  // Registered where they are read, as every other secret is: a client error that echoes its
  // configuration must not carry them into a log line.
  registerSecret(keyPassword);
  if (keyPassword !== undefined) out.keyPassword = keyPassword;
  if (section.sasl !== undefined) {
    const passwordPath = [...SECTION, 'sasl', 'password_file'];
    const password =
      envText(env, KAFKA_SECURITY_ENV.password) ??
      (section.sasl.password_file === undefined
        ? undefined
        : readSecret(section.sasl.password_file, passwordPath, source));
    if (password === undefined) {
      throw new ConfigError(source, [
        makeIssue({
          path: formatPath(passwordPath),
          expected: `a password file (or ${KAFKA_SECURITY_ENV.password} / ${KAFKA_SECURITY_ENV.passwordFile})`,
          value: undefined,
        }),
      ]);
    }
    registerSecret(password);
    out.sasl = { mechanism: section.sasl.mechanism, username: section.sasl.username, password };
  }
  return out;
}

const ENV_OF_KEY: Readonly<Record<string, string>> = {
  protocol: KAFKA_SECURITY_ENV.protocol,
  ca_file: KAFKA_SECURITY_ENV.caFile,
  sasl: KAFKA_SECURITY_ENV.username,
  'sasl.username': KAFKA_SECURITY_ENV.username,
  'sasl.mechanism': KAFKA_SECURITY_ENV.mechanism,
  'sasl.password_file': KAFKA_SECURITY_ENV.passwordFile,
};

/**
 * The settings the environment alone describes (a process started without config.yaml: a worker
 * the verifier or a test spawned, `hamstring verify --bootstrap`). Same variables, same checks.
 *
 * @throws {@link ConfigError} naming the variables
 */
export function kafkaSecurityFromEnv(env: NodeJS.ProcessEnv = process.env): KafkaSecurity {
  const protocol = envText(env, KAFKA_SECURITY_ENV.protocol);
  if (protocol === undefined) return PLAINTEXT_SECURITY;
  const tree: Record<string, unknown> = { protocol };
  const caFile = envText(env, KAFKA_SECURITY_ENV.caFile);
  if (caFile !== undefined) tree.ca_file = caFile;
  const username = envText(env, KAFKA_SECURITY_ENV.username);
  const mechanism = envText(env, KAFKA_SECURITY_ENV.mechanism);
  const passwordFile = envText(env, KAFKA_SECURITY_ENV.passwordFile);
  if (username !== undefined || mechanism !== undefined || passwordFile !== undefined) {
    tree.sasl = {
      ...(username === undefined ? {} : { username }),
      ...(mechanism === undefined ? {} : { mechanism }),
      ...(passwordFile === undefined ? {} : { password_file: passwordFile }),
    };
  }
  const result = parseWithSchema(kafkaSecuritySchema, tree);
  if (!result.ok) {
    const issues: ConfigIssue[] = result.issues.map((issue) => ({
      ...issue,
      path: ENV_OF_KEY[issue.path] ?? KAFKA_SECURITY_ENV.protocol,
      origin: 'env' as const,
    }));
    throw new ConfigError('env', issues);
  }
  return resolveKafkaSecurity(result.data, env, 'env');
}
