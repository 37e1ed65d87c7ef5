import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SUPPORTED_PEER_VERSIONS } from '../../lib/common/constants';

/**
 * The ranges the boot check enforces and the ones npm sees in package.json cannot drift apart:
 * one is what users are told at install, the other what boot accepts.
 */
interface Manifest {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const manifest = JSON.parse(
  readFileSync(join(__dirname, '../../package.json'), 'utf8'),
) as Manifest;

/**
 * Required peers the boot check leaves alone, and why. NestJS itself requires reflect-metadata and
 * rxjs in its own ranges; cron is what @nestjs/schedule schedules with.
 */
const NOT_CHECKED = ['cron', 'reflect-metadata', 'rxjs'];

describe('SUPPORTED_PEER_VERSIONS', () => {
  it.each(Object.entries(SUPPORTED_PEER_VERSIONS))(
    '%s: the boot check accepts exactly the range package.json declares (%s)',
    (name, range) => {
      expect(manifest.peerDependencies[name]).toBe(range);
    },
  );

  it('covers every required peer dependency but those listed as not checked', () => {
    const required = Object.keys(manifest.peerDependencies).filter(
      (name) => manifest.peerDependenciesMeta?.[name]?.optional !== true,
    );
    expect(required.filter((name) => !NOT_CHECKED.includes(name)).sort()).toEqual(
      Object.keys(SUPPORTED_PEER_VERSIONS).sort(),
    );
  });
});
