import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { GenevaDriveModuleOptions } from './interfaces/module-options.interface';

/** `forRoot`/`forRootAsync` plumbing; `isGlobal` (default true) is the builder's extra. */
export const {
  ConfigurableModuleClass: GenevaDriveConfigurableModule,
  MODULE_OPTIONS_TOKEN: GENEVA_DRIVE_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<GenevaDriveModuleOptions>({ moduleName: 'GenevaDrive' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('create')
  .setExtras({ isGlobal: true }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
