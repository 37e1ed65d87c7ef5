import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ModuleOptionsError } from '../errors/module-options.error';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import { INSTALLED_VERSION_READER, type InstalledVersionReader } from './installed-version.reader';
import { findUnsupportedPeers, unsupportedPeersMessage } from './unsupported-peers';

/**
 * Fails boot when an installed peer package (NestJS, TypeORM, BullMQ, class-validator …) is
 * outside the versions this release supports, with a `ModuleOptionsError` naming the package,
 * its version, the range and the install command. With `allowUnsupportedVersions: true` the same
 * message is logged as a warning and boot goes on. Registered first among the library's
 * providers, so it reports before anything that an unsupported version could break.
 */
@Injectable()
export class PeerVersionCheck implements OnModuleInit {
  constructor(
    @Inject(INSTALLED_VERSION_READER) private readonly read: InstalledVersionReader,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  onModuleInit(): void {
    const unsupported = findUnsupportedPeers(this.read);
    if (unsupported.length === 0) return;
    const message = unsupportedPeersMessage(unsupported);
    if (!this.options.allowUnsupportedVersions) {
      throw new ModuleOptionsError(
        `${message} (or set allowUnsupportedVersions: true to boot anyway, untested).`,
      );
    }
    (this.options.logger ?? new Logger('GenevaDrive')).warn(
      `${message} (booting anyway: allowUnsupportedVersions is set).`,
    );
  }
}
