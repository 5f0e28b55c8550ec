/**
 * `--profile`: the proxy runs under `node --cpu-prof`; this sums the `.cpuprofile` files of one arm (every proxy
 * process: with `--proxy-workers N`, the primary and each worker) into self time per function, the table the
 * README's profile section is read from. Also `node dist/bench/profile.js DIR|FILE...` prints that table.
 */
import { copyFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const PROFILE_TOP = 25;

/** The parts of a V8 .cpuprofile this reads. */
interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number } }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfileLine {
  /** `function (file:line)`; V8's own entries as named: (garbage collector), (program), (idle). */
  readonly name: string;
  readonly selfMs: number;
  /** Share of the busy time (everything but idle). */
  readonly share: number;
}

export interface ProfileSummary {
  readonly files: number;
  readonly busyMs: number;
  readonly top: readonly ProfileLine[];
}

function frameName(frame: CpuProfile['nodes'][number]['callFrame']): string {
  const fn = frame.functionName || '(anonymous)';
  if (!frame.url) return fn;
  const url = frame.url.replace(/^file:\/\//, '');
  const short = url.includes('/node_modules/') ? url.slice(url.lastIndexOf('/node_modules/') + 14) : url.includes('/dist/') ? url.slice(url.lastIndexOf('/dist/') + 6) : url;
  return `${fn} (${short}:${frame.lineNumber + 1})`;
}

/** Self time per function name over one profile, added into `into`. */
export function addSelfTimes(profile: CpuProfile, into: Map<string, number>): void {
  const names = new Map(profile.nodes.map((n) => [n.id, frameName(n.callFrame)]));
  for (let i = 0; i < profile.samples.length; i++) {
    const name = names.get(profile.samples[i] as number) ?? '(unknown)';
    into.set(name, (into.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
}

export function summarize(selfMs: ReadonlyMap<string, number>, files: number, top: number): ProfileSummary {
  const busy = [...selfMs].filter(([name]) => name !== '(idle)');
  const busyMs = busy.reduce((a, [, ms]) => a + ms, 0);
  const lines = busy
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, ms]) => ({ name, selfMs: ms, share: busyMs > 0 ? ms / busyMs : 0 }));
  return { files, busyMs, top: lines };
}

async function profileFiles(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) out.push(...(await readdir(p)).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(p, f)));
    else out.push(p);
  }
  return out;
}

export async function summarizeProfiles(dirOrFiles: string | readonly string[], top = PROFILE_TOP): Promise<ProfileSummary> {
  const files = await profileFiles(typeof dirOrFiles === 'string' ? [dirOrFiles] : dirOrFiles);
  if (files.length === 0) throw new Error('no .cpuprofile written (did the proxy exit cleanly?)');
  const selfMs = new Map<string, number>();
  for (const f of files) addSelfTimes(JSON.parse(await readFile(f, 'utf8')) as CpuProfile, selfMs);
  return summarize(selfMs, files.length, top);
}

export function renderProfile(label: string, s: ProfileSummary): string {
  const rows = s.top.map((l, i) => `| ${i + 1} | ${(l.share * 100).toFixed(1)}% | ${l.selfMs.toFixed(0)} | \`${l.name.replace(/\|/g, '\\|')}\` |`);
  return [`## CPU profile: ${label} (${s.files} process(es), ${s.busyMs.toFixed(0)} ms busy)`, '', '| # | self % of busy | self ms | function |', '|---:|---:|---:|---|', ...rows].join('\n');
}

export async function copyProfiles(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const f of await profileFiles([from])) await copyFile(f, path.join(to, path.basename(f)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  if (args.length === 0) {
    process.stderr.write('usage: node dist/bench/profile.js DIR|FILE.cpuprofile ...\n');
    process.exit(2);
  }
  summarizeProfiles(args).then(
    (s) => process.stdout.write(renderProfile(args.join(' '), s) + '\n'),
    (err: unknown) => {
      process.stderr.write(`profile: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
