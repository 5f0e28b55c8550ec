// node .inc-probe.mjs <pre-module>... -- <module>: CPU ms of the last import after the others
import { pathToFileURL } from 'node:url';
const args = process.argv.slice(2); const i = args.indexOf('--');
const spec = (s) => s.startsWith('dist/') ? pathToFileURL(s).href : s;
for (const p of args.slice(0, i)) await import(spec(p));
const t0 = process.cpuUsage();
for (const p of args.slice(i + 1)) await import(spec(p));
const d = process.cpuUsage(t0);
process.stdout.write(String(Math.round((d.user + d.system) / 1000)) + ' ');
