import { minVersion, satisfies, valid } from 'semver';
import { SUPPORTED_PEER_VERSIONS } from '../common/constants';
import type { InstalledVersionReader } from './installed-version.reader';

/** An installed peer package whose version is outside the supported range. */
export interface UnsupportedPeer {
  name: string;
  installed: string;
  supported: string;
  /** The range to install: the nearest supported one above the installed version, else the newest. */
  install: string;
}

/**
 * The peers of `ranges` whose installed version (as `read` reports it) is outside their range.
 * A package that is not installed or whose version is not semver is not reported: the check
 * exists to name a wrong version, not to guess. Prereleases inside a supported major pass.
 */
export function findUnsupportedPeers(
  read: InstalledVersionReader,
  ranges: Readonly<Record<string, string>> = SUPPORTED_PEER_VERSIONS,
): UnsupportedPeer[] {
  return Object.entries(ranges).flatMap(([name, supported]) => {
    const installed = read(name);
    if (installed === null || valid(installed) === null) return [];
    if (satisfies(installed, supported, { includePrerelease: true })) return [];
    return [{ name, installed, supported, install: rangeToInstall(installed, supported) }];
  });
}

/** `^0.3.20 || ^1` for 0.3.10 gives `^0.3.20` (an update, not a new major); for 2.0.0, `^1`. */
function rangeToInstall(installed: string, supported: string): string {
  const alternatives = supported.split('||').map((alternative) => alternative.trim());
  const above = alternatives.find((alternative) => {
    const lowest = minVersion(alternative);
    return lowest !== null && lowest.compare(installed) > 0;
  });
  return above ?? alternatives[alternatives.length - 1];
}

/** Names each package, its installed version and the supported range, then the npm command. */
export function unsupportedPeersMessage(peers: UnsupportedPeer[]): string {
  const found = peers
    .map(({ name, installed, supported }) => `${name} ${installed} (supported: ${supported})`)
    .join(', ');
  const command = peers.map(({ name, install }) => `${name}@${install}`).join(' ');
  return (
    `nestjs-geneva-drive does not support the installed ${found}. ` +
    `Install a supported version: npm install ${command}`
  );
}
