import {
  kafkaSecurityFromEnv,
  resolveKafkaSecurity,
  type HamstringConfig,
  type KafkaSecurity,
} from '../config/index.ts';

/**
 * The TLS and SASL settings every Kafka client of this process is made with. One process talks to
 * one cluster with one principal, so the setting is process-wide: the CLI installs the one
 * config.yaml resolves ({@link useKafkaSecurity}); a process started without a config (a worker
 * the verifier or a test spawned) takes the one its environment describes (KAFKA_SECURITY_PROTOCOL,
 * KAFKA_SASL_*), read at the first client. Every place that builds librdkafka properties goes
 * through {@link connectionProperties}, so no client can miss it.
 */

let installed: KafkaSecurity | undefined;

/** Makes `security` the settings of every Kafka client created from now on. */
export function useKafkaSecurity(security: KafkaSecurity): void {
  installed = security;
}

/** The settings in force; from the environment when none was installed. */
export function kafkaSecurity(): KafkaSecurity {
  installed ??= kafkaSecurityFromEnv(process.env);
  return installed;
}

type Props = Record<string, string | number | boolean>;

/** librdkafka's properties for `security` (no property at all for PLAINTEXT). */
export function securityProperties(security: KafkaSecurity): Props {
  if (security.protocol === 'PLAINTEXT') return {};
  const props: Props = { 'security.protocol': security.protocol.toLowerCase() };
  if (security.protocol === 'SSL' || security.protocol === 'SASL_SSL') {
    props['ssl.endpoint.identification.algorithm'] = security.verifyHostname ? 'https' : 'none';
    if (security.caFile !== undefined) props['ssl.ca.location'] = security.caFile;
    if (security.certificateFile !== undefined) props['ssl.certificate.location'] = security.certificateFile;
    if (security.keyFile !== undefined) props['ssl.key.location'] = security.keyFile;
    if (security.keyPassword !== undefined) props['ssl.key.password'] = security.keyPassword;
  }
  if (security.sasl !== undefined) {
    props['sasl.mechanisms'] = security.sasl.mechanism;
    props['sasl.username'] = security.sasl.username;
    props['sasl.password'] = security.sasl.password;
  }
  return props;
}

/**
 * The principal the cluster sees for these settings, as ACLs name it: the SASL user, the client
 * certificate's subject (the broker maps it; shown as the certificate file), or ANONYMOUS.
 */
export function principalOf(security: KafkaSecurity): string {
  if (security.sasl !== undefined) return `User:${security.sasl.username}`;
  if (security.certificateFile !== undefined) return `the client certificate ${security.certificateFile}`;
  return 'User:ANONYMOUS';
}

/**
 * What every client starts from: where the cluster is, who the client is, and how it connects
 * (the process's {@link kafkaSecurity} unless `security` is given).
 */
export function connectionProperties(
  bootstrapServers: string,
  clientId: string,
  security: KafkaSecurity = kafkaSecurity(),
): Props {
  return { 'bootstrap.servers': bootstrapServers, 'client.id': clientId, ...securityProperties(security) };
}

/**
 * Installs the settings of a loaded config.yaml (with KAFKA_SECURITY_* / KAFKA_SASL_* applied):
 * what a command calls right after loading its configuration, before it makes any client.
 *
 * @throws ConfigError when a password file cannot be read or no password is given
 */
export function useConfiguredKafkaSecurity(
  config: HamstringConfig,
  env: NodeJS.ProcessEnv = process.env,
): void {
  useKafkaSecurity(resolveKafkaSecurity(config.environment.kafka_security, env));
}

/**
 * What to add to "topic X does not exist": a cluster hides the topics the principal may not
 * DESCRIBE (neither READ nor WRITE, which imply it), so with credentials a missing ACL looks the same.
 */
export function hiddenTopicsHint(topics: readonly string[], operation: 'READ' | 'WRITE'): string {
  const security = kafkaSecurity();
  if (security.protocol === 'PLAINTEXT') return '';
  return ` (or ${principalOf(security)} may not ${operation} or DESCRIBE on TOPIC ${topics.join(', ')})`;
}
