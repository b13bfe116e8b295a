/**
 * Writes one StatefulSet per configured stage component into deploy/kubernetes/
 * (`npm run kubernetes:stages`), from the components of the ConfigMap's config.yaml: a component
 * added to that config gets its manifest here, and every stage's pod spec stays the same (probes,
 * security context, volumes) instead of drifting between hand-kept copies. Stale stage manifests
 * (a component no longer configured) are deleted. test/unit/deploy/kubernetes.test.ts checks that
 * the committed files equal this output.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { loadConfig, type HamstringConfig } from '../src/config/index.ts';
import { pipelineComponents, type PipelineComponent } from '../src/stages/pipeline-components.ts';

export const KUBERNETES_DIR = fileURLToPath(new URL('../deploy/kubernetes/', import.meta.url));
const STAGE_FILE = /^stage-.*\.yaml$/;
/** Input partitions a stage creates its topics with (`--partitions`): what its replicas share. */
const PARTITIONS = 6;

/** The config the manifests run: config.yaml of the ConfigMap `hamstring-config`. */
export function configMapConfig(dir = KUBERNETES_DIR): HamstringConfig {
  const doc = parseDocument(readFileSync(`${dir}configmap.yaml`, 'utf8')).toJS() as {
    data?: Record<string, string>;
  };
  const text = doc.data?.['config.yaml'];
  if (text === undefined) throw new Error(`${dir}configmap.yaml has no data.config.yaml`);
  return loadConfig({ text, path: 'ConfigMap hamstring-config', env: {} });
}

/** The manifests, by file name: `stage-<kind>[-<name>].yaml`. */
export function stageManifests(config: HamstringConfig): Map<string, string> {
  const files = new Map<string, string>();
  for (const c of pipelineComponents(config)) {
    const single = c.kind === c.name;
    const slug = single ? c.kind : `${c.kind}-${c.name.replaceAll('_', '-')}`;
    files.set(`stage-${slug}.yaml`, manifest(c, slug, single, config.runtime.health_port));
  }
  return files;
}

function manifest(c: PipelineComponent, slug: string, single: boolean, healthPort: number): string {
  const component = single ? c.kind : `${c.kind}-${c.name}`;
  const command = single ? `hamstring run ${c.kind}` : `hamstring run ${c.kind} --name ${c.name}`;
  const nameArgs = single ? '' : `\n            - --name\n            - ${c.name}`;
  const probe = (path: string, period: number, failures: number) => `
            exec:
              command:
                - node
                - /opt/hamstring/deploy/health-probe.js
                - http://127.0.0.1:${healthPort}${path}
                - /run/secrets/hamstring/endpoints/token
            periodSeconds: ${period}
            timeoutSeconds: 5
            failureThreshold: ${failures}`;
  return `# \`${command}\`, as a StatefulSet rather than a Deployment.
# Its pods keep their names across restarts, and the name is the instance id
# (HAMSTRING_INSTANCE_ID), so a restarted instance fences its predecessor's transactions. Replicas
# share the input partitions (${PARTITIONS}, from --partitions) in one consumer group.
# Written by scripts/kubernetes-stages.ts from the ConfigMap's config: edit that, not this file.
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: hamstring-${slug}
  namespace: hamstring
  labels:
    app.kubernetes.io/name: hamstring
    app.kubernetes.io/component: ${component}
spec:
  serviceName: hamstring-workers
  replicas: 1
  podManagementPolicy: Parallel
  selector:
    matchLabels:
      app.kubernetes.io/name: hamstring
      app.kubernetes.io/component: ${component}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: hamstring
        app.kubernetes.io/component: ${component}
        hamstring/role: stage
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 10001
        runAsGroup: 10001
        fsGroup: 10001
        seccompProfile: { type: RuntimeDefault }
      # A graceful stop finishes or aborts the open transaction and leaves the group.
      terminationGracePeriodSeconds: 120
      containers:
        - name: stage
          image: registry.example.internal/hamstring:0.1.0
          args:
            - run
            - ${c.kind}${nameArgs}
            - --create-topics
            - --partitions
            - '${PARTITIONS}'
            - --config
            - /etc/hamstring/config.yaml
          env:
            - name: HAMSTRING_INSTANCE_ID
              valueFrom:
                fieldRef: { fieldPath: metadata.name }
          ports:
            - { name: health, containerPort: ${healthPort} }
          # Before the first /livez the worker may wait for Kafka (topic creation retries for 5 min).
          startupProbe:${probe('/livez', 10, 36)}
          livenessProbe:${probe('/livez', 15, 4)}
          readinessProbe:${probe('/readyz', 10, 3)}
          resources:
            requests: { cpu: 250m, memory: 384Mi }
            limits: { memory: 1536Mi }
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: { drop: [ALL] }
          volumeMounts:
            - { name: config, mountPath: /etc/hamstring, readOnly: true }
            - { name: kafka, mountPath: /run/secrets/hamstring/kafka, readOnly: true }
            - { name: endpoints, mountPath: /run/secrets/hamstring/endpoints, readOnly: true }
            - { name: state, mountPath: /var/lib/hamstring }
            - { name: tmp, mountPath: /tmp }
      volumes:
        - name: config
          configMap: { name: hamstring-config }
        - name: kafka
          secret: { secretName: hamstring-kafka, defaultMode: 0440 }
        - name: endpoints
          secret: { secretName: hamstring-endpoints, defaultMode: 0440 }
        - name: state
          emptyDir: {}
        - name: tmp
          emptyDir: {}
`;
}

/** The stage manifests in `dir` now, by file name. */
export function committedStageManifests(dir = KUBERNETES_DIR): Map<string, string> {
  return new Map(
    readdirSync(dir)
      .filter((f) => STAGE_FILE.test(f))
      .sort()
      .map((f) => [f, readFileSync(`${dir}${f}`, 'utf8')]),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = stageManifests(configMapConfig());
  for (const f of committedStageManifests().keys()) if (!wanted.has(f)) rmSync(`${KUBERNETES_DIR}${f}`);
  for (const [f, text] of wanted) writeFileSync(`${KUBERNETES_DIR}${f}`, text);
  console.log(`wrote ${wanted.size} stage manifests to ${KUBERNETES_DIR}`);
}
