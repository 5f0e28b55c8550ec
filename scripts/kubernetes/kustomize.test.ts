import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { renderKustomization } from './kustomize.js';

async function tree(files: Record<string, string>): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-kustomize-'));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  template:
    spec:
      containers:
        - { name: a, image: "registry.local:5000/team/app:1.0", args: [x] }
        - { name: b, image: other }
`;

test('resources, a base, JSON 6902 patches, images (a registry port is not a tag) and the namespace (a Namespace is renamed)', async () => {
  const t = await tree({
    'base/kustomization.yaml': 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deployment.yaml, ns.yaml]\n',
    'base/deployment.yaml': DEPLOYMENT,
    'base/ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: { name: base }\n',
    'overlay/kustomization.yaml': [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'namespace: team',
      'resources: [../base]',
      'images: [{ name: registry.local:5000/team/app, newTag: "2.0" }]',
      'patches:',
      '  - target: { kind: Deployment, name: web }',
      '    patch: |-',
      '      - { op: add, path: /spec/template/spec/containers/0/args/-, value: y }',
      '      - { op: replace, path: /spec/template/spec/containers/1/image, value: other:3 }',
      '      - { op: add, path: /spec/replicas, value: 2 }',
      '      - { op: test, path: /spec/replicas, value: 2 }',
      '      - { op: remove, path: /spec/template/spec/containers/1/name }',
    ].join('\n'),
  });
  try {
    const [d, ns] = renderKustomization(path.join(t.dir, 'overlay'));
    assert.deepEqual(d?.metadata, { name: 'web', namespace: 'team' });
    assert.equal(ns?.metadata.name, 'team');
    assert.equal(ns?.metadata.namespace, undefined);
    const spec = (d?.spec as { replicas: number; template: { spec: { containers: Record<string, unknown>[] } } });
    assert.equal(spec.replicas, 2);
    assert.deepEqual(spec.template.spec.containers, [
      { name: 'a', image: 'registry.local:5000/team/app:2.0', args: ['x', 'y'] },
      { image: 'other:3' },
    ]);
  } finally {
    await t.remove();
  }
});

test('anything the renderer does not implement is refused, never rendered differently', async () => {
  const cases: [string, RegExp][] = [
    ['commonLabels: { a: b }\nresources: [deployment.yaml]', /"commonLabels" is not supported/],
    ['resources: [deployment.yaml]\npatches: [{ path: p.yaml }]', /only patches with a target/],
    ['resources: [deployment.yaml]\npatches: [{ target: { kind: Service }, patch: "- { op: add, path: /x, value: 1 }" }]', /selects nothing/],
    ['resources: [deployment.yaml]\npatches: [{ target: { kind: Deployment }, patch: "- { op: remove, path: /spec/nothing }" }]', /no "nothing"/],
    ['resources: [deployment.yaml]\npatches: [{ target: { kind: Deployment }, patch: "- { op: replace, path: /spec/template/spec/containers/7, value: 1 }" }]', /out of range/],
    ['resources: [deployment.yaml]\npatches: [{ target: { kind: Deployment }, patch: "- { op: move, from: /a, path: /b }" }]', /"move" is not supported/],
    ['resources: [deployment.yaml]\npatches: [{ target: { kind: Deployment }, patch: "spec: { replicas: 2 }" }]', /only JSON 6902 patches/],
    ['resources: [dup.yaml]', /Map keys must be unique/],
  ];
  for (const [body, expected] of cases) {
    const t = await tree({
      'kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${body}\n`,
      'deployment.yaml': DEPLOYMENT,
      'dup.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: a, name: b }\n',
    });
    try {
      assert.throws(() => renderKustomization(t.dir), expected, body);
    } finally {
      await t.remove();
    }
  }
});
