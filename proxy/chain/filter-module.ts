/**
 * Finds the filter factory in an imported filter module, ES module or CommonJS, and says why there is none.
 *
 * Node imports a CommonJS module with `module.exports` as its default export, so `module.exports = factory` works
 * as `export default factory` does; but TypeScript (and Babel) compile `export default factory` to CommonJS as
 * `exports.default = factory`, which makes the default export `{ default: factory }`. A newcomer's project is
 * CommonJS until its package.json says `"type": "module"` (`npm init -y` writes none), so that second shape is the
 * common one: it is accepted too, and anything else is refused naming the module's format and the fix.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FilterFactory } from '../api/filter.js';
import { UsageError } from '../../lib/flags.js';

/** How node loaded a module file, and why (for the message). */
export interface ModuleFormat {
  readonly kind: 'commonjs' | 'module';
  /** Why, e.g. `a .cjs file`, `its package.json (/p/package.json) has no "type": "module"`. */
  readonly because: string;
}

/** The nearest package.json above `file`, or undefined (node's own lookup for `type`). */
function nearestPackageJson(file: string): string | undefined {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'package.json');
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** The format node gives a `file:` URL by its extension and nearest package.json; undefined for other URLs. */
export function moduleFormat(url: string): ModuleFormat | undefined {
  if (!url.startsWith('file:')) return undefined;
  const file = fileURLToPath(url.replace(/\?.*$/, ''));
  if (file.endsWith('.cjs')) return { kind: 'commonjs', because: 'a .cjs file' };
  if (file.endsWith('.mjs')) return { kind: 'module', because: 'a .mjs file' };
  const pkg = nearestPackageJson(file);
  if (pkg === undefined) return { kind: 'commonjs', because: 'no package.json above it says "type": "module"' };
  let type: unknown;
  try {
    type = (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type;
  } catch {
    return undefined; // node would have refused to load it: the import's own error says why
  }
  return type === 'module'
    ? { kind: 'module', because: `its package.json (${pkg}) has "type": "module"` }
    : { kind: 'commonjs', because: `its package.json (${pkg}) has no "type": "module"` };
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The factory `mod` (the namespace `import(url)` gave) exports, or a UsageError naming the cause and the fix. */
export function filterFactoryOf(mod: Readonly<Record<string, unknown>>, name: string, url: string): FilterFactory {
  const exported = mod.default;
  if (typeof exported === 'function') return exported as FilterFactory;
  // A CommonJS namespace always has a default (module.exports, `{}` at least): no default at all is an ES module.
  if (!('default' in mod)) {
    throw new UsageError(`filter ${name}: the module has no default export: the default export must be a filter factory function (\`export default factory\`)`);
  }
  const format = moduleFormat(url);
  if (format?.kind === 'commonjs') {
    const inner = exported !== null && typeof exported === 'object' ? (exported as { default?: unknown }).default : undefined;
    if (typeof inner === 'function') return inner as FilterFactory; // `exports.default = factory`, as tsc compiles `export default`
    throw new UsageError(
      `filter ${name}: this module is CommonJS (${format.because}) and exports no filter factory: ` +
        'export one with `module.exports = factory` (or `exports.default = factory`), or make it an ES module ' +
        '(set "type": "module" in its package.json and build again)',
    );
  }
  throw new UsageError(`filter ${name}: the default export must be a filter factory function (it is ${describe(exported)})`);
}
