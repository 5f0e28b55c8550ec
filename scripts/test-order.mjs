// The order `npm test` starts its files in: longest first, so the last minutes of a run are not one long file
// running alone. A file's length is its wall time in the last run's reports/test-times.md when there is one, else
// in scripts/test-seconds.json (the times of a recorded run, kept in the repository so a fresh clone orders and
// groups its files as well: `npm run test:seconds` rewrites it from the last run's report); a file in neither (a
// new file) is guessed from what it is: one that starts processes (its source says `Needs processes:`) is long, an
// end-to-end or fuzz file is middling, any other is short.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Guessed seconds of a file the last run did not time. */
const GUESS = Object.freeze({ processes: 8, endToEnd: 3, unit: 0.5 });

/** The recorded run's seconds kept in the repository (`test-seconds.json` beside this file). */
export const SECONDS_FILE = fileURLToPath(new URL('./test-seconds.json', import.meta.url));

/**
 * Wall seconds by file (relative to dist/, `/`-separated): those of `secondsFile` (a JSON object, when there is
 * one), overridden by a test-times report's (`reportTimes`, when there is one).
 */
export function recordedTimes(reportFile, secondsFile = SECONDS_FILE) {
  const kept = existsSync(secondsFile) ? Object.entries(JSON.parse(readFileSync(secondsFile, 'utf8'))) : [];
  return new Map([...kept, ...reportTimes(reportFile)]);
}

/**
 * Wall seconds by file from a test-times report alone; empty when there is none. A file that shared a process is
 * listed there with the time its tests took, which leaves out what its group spent loading it and starting its
 * fixtures; so the files of a group are weighed by their shares of the group's whole wall time, and the next run
 * cuts its groups by what they really took.
 */
export function reportTimes(reportFile) {
  const times = new Map();
  if (!existsSync(reportFile)) return times;
  const groups = [];
  for (const line of readFileSync(reportFile, 'utf8').split('\n')) {
    const m = /^\| (\S+\.test\.js)(?: \(shared\))? \| ([\d.]+) \|/.exec(line);
    if (m) times.set(m[1], Number(m[2]));
    const g = /^\| \S+\.test\.js \(one process: ([^)]*)\) \| ([\d.]+) \|/.exec(line);
    if (g) groups.push({ members: g[1].split(', '), wall: Number(g[2]) });
  }
  for (const { members, wall } of groups) {
    const own = members.map((m) => times.get(m) ?? 0);
    const sum = own.reduce((a, b) => a + b, 0);
    members.forEach((m, i) => times.set(m, sum > 0 ? (wall * own[i]) / sum : wall / members.length));
  }
  return times;
}

/** How long `file` is guessed to take from its compiled source. */
export function guessedSeconds(relative, source) {
  if (source.includes('Needs processes:')) return GUESS.processes;
  if (/(^|\/)(e2e|fuzz)\//.test(relative) || relative.startsWith('scripts/')) return GUESS.endToEnd;
  return GUESS.unit;
}

/**
 * `files` (absolute, under `dist`) sorted longest first by `recorded` (`recordedTimes`), else by a guess; ties keep
 * their path order. A group file (a key of `groups`, `test-groups.mjs`) weighs as much as its member files
 * (relative to dist/) together.
 */
export function longestFirst(files, dist, recorded, groups = new Map()) {
  const secondsOf = (relative) => recorded.get(relative) ?? guessedSeconds(relative, readFileSync(path.join(dist, relative), 'utf8'));
  const weighed = files.map((file) => {
    const relative = path.relative(dist, file).split(path.sep).join('/');
    const members = groups.get(file);
    const seconds = members === undefined ? secondsOf(relative) : members.reduce((sum, m) => sum + secondsOf(m), 0);
    return { file, relative, seconds };
  });
  weighed.sort((a, b) => b.seconds - a.seconds || (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0));
  return weighed.map((w) => w.file);
}
