/**
 * The data directory holds what must stay the service's own: the SQLite store (users, sealed
 * wallet secrets, token hashes, signed transactions, with its -wal and -shm), the service key and
 * the sealed service wallet. It is made private at start:
 *
 * - the process umask becomes 077, so everything created from here on (SQLite's own files
 *   included, which it opens 0644 & ~umask) is 0600, directories 0700;
 * - the directory is made 0700 and every file already in it 0600 (subdirectories 0700), so a data
 *   directory from an older version, or copied in, is tightened too;
 * - what cannot be made private (owned by another user, or a filesystem that ignores modes) is
 *   reported: the directory is then shared, and the operator must know.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export const DATA_DIR_MODE = 0o700;
export const DATA_FILE_MODE = 0o600;

/**
 * Sets the umask, creates `dir` if needed and tightens it and everything in it; returns (and
 * passes to `warn`) one line per path that stays readable by others.
 */
export function secureDataDir(dir: string, warn: (line: string) => void = (l) => console.warn(l)): string[] {
  process.umask(0o077);
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  const warnings: string[] = [];
  const uid = process.getuid?.();
  const owner = statSync(dir).uid;
  if (uid !== undefined && uid !== 0 && owner !== uid)
    warnings.push(`data directory ${dir} belongs to uid ${owner}, not this process (uid ${uid}): it is shared`);
  const tighten = (path: string, mode: number) => {
    try {
      chmodSync(path, mode);
    } catch {
      // Not ours to change: reported below from what the mode is.
    }
    const now = lstatSync(path).mode & 0o777;
    if (now & 0o077)
      warnings.push(`${path} is mode ${now.toString(8)} (readable by other users) and could not be made ${mode.toString(8)}: the data directory is shared`);
  };
  const walk = (d: string) => {
    tighten(d, DATA_DIR_MODE);
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.isFile()) tighten(path, DATA_FILE_MODE);
      // Symlinks and sockets are left as they are: chmod would follow a link out of the directory.
    }
  };
  walk(dir);
  for (const w of warnings) warn(`warning: ${w}`);
  return warnings;
}
