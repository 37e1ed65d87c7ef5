import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { DataSource } from 'typeorm';
import { postgresConnection } from '../../test/e2e/support/database';
import { withRedis } from './redis';

/** Where a benchmark ran: every result line carries it. */
export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  totalMemoryGb: number;
  os: string;
  node: string;
  postgres: string;
  redis: string;
  /** The 1-minute load average when the benchmark started: other work skews the figures. */
  loadAverage: number;
}

let captured: Promise<MachineInfo> | null = null;

/** The machine, read on the first call (at the benchmark's start, for the load average). */
export function machineInfo(): Promise<MachineInfo> {
  captured ??= readMachineInfo();
  return captured;
}

async function readMachineInfo(): Promise<MachineInfo> {
  const loadAverage = Math.round(loadavg()[0] * 100) / 100;
  const [postgres, redis] = await Promise.all([postgresVersion(), redisVersion()]);
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    totalMemoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: `${platform()} ${release()}`,
    node: process.version,
    postgres,
    redis,
    loadAverage,
  };
}

async function postgresVersion(): Promise<string> {
  const source = await new DataSource(postgresConnection).initialize();
  try {
    const rows = await source.query<Array<{ server_version: string }>>('SHOW server_version');
    return rows[0].server_version;
  } finally {
    await source.destroy();
  }
}

function redisVersion(): Promise<string> {
  return withRedis(
    async (client) => /redis_version:(\S+)/.exec(await client.info())?.[1] ?? 'unknown',
  );
}
