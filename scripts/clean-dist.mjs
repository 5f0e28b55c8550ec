// Removes the compiled output so a moved or deleted source file leaves no stale test behind in dist/.
import { rmSync } from 'node:fs';
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
