import type { DataSource, EntityMetadata, ValueTransformer } from 'typeorm';
import { SignalEntity } from '../../entities/signal.entity';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { WorkflowEntity } from '../../entities/workflow.entity';
import type { SchemaFeatures } from '../../ports/workflow.repository';
import { quoteIdentifier, quoteTable } from '../sql-identifiers';

/** An entity column's metadata, through TypeORM's public `EntityMetadata` type. */
type ColumnMetadata = EntityMetadata['columns'][number];

/** An entity class of the library. */
type EntityClass = new () => object;

/** MySQL's JSON column type code in the protocol. */
const MYSQL_TYPE_JSON = 245;

/** The library's JSON columns, with the optional migration each needs. */
const JSON_COLUMNS: ReadonlyArray<{
  entity: EntityClass;
  columns: string[];
  feature: keyof SchemaFeatures | null;
}> = [
  { entity: WorkflowEntity, columns: ['metadata'], feature: null },
  { entity: StepExecutionEntity, columns: ['metadata'], feature: null },
  { entity: StepExecutionEntity, columns: ['cursor'], feature: 'resumable' },
  { entity: SignalEntity, columns: ['payload'], feature: 'signals' },
];

/** A pooled mysql2 connection, as far as the probe needs it. */
interface RawConnection {
  config?: { jsonStrings?: boolean };
  query(
    sql: string,
    callback: (error: Error | null, rows: unknown, fields?: RawField[]) => void,
  ): void;
  release(): void;
}

interface RawField {
  name: string;
  columnType?: number;
  type?: number;
  /** MariaDB 10.5+ marks JSON columns (LONGTEXT underneath) in its extended metadata. */
  extendedFormat?: string;
}

interface MysqlDriverLike {
  obtainMasterConnection(): Promise<RawConnection>;
  isUsingMysql2?(): boolean;
}

const adapted = new WeakSet<ColumnMetadata>();

/**
 * MariaDB/MySQL: makes the library's JSON columns encode and decode exactly once.
 *
 * mysql2 decodes a column itself when the server marks it JSON (MySQL's JSON type, MariaDB's
 * `json` through its extended metadata) unless `jsonStrings` is set, and TypeORM then tries
 * `JSON.parse` again on every string it gets: a payload or cursor `"123"` would come back as the
 * number 123. So each JSON column is probed once (a zero-row SELECT shows how the server types it),
 * TypeORM's own JSON handling is switched off for it, and a transformer stringifies on write and
 * parses on read only when the driver did not. Columns of a migration that has not run yet are
 * probed by a later call (`refreshSchemaFeatures`).
 */
export async function adaptMysqlJsonColumns(
  dataSource: DataSource,
  features: SchemaFeatures,
): Promise<void> {
  const driver = dataSource.driver as unknown as MysqlDriverLike;
  for (const { entity, columns, feature } of JSON_COLUMNS) {
    if (feature && !features[feature]) continue;
    const metadata = dataSource.getMetadata(entity);
    const pending = columns
      .map((name) => metadata.findColumnWithDatabaseName(name))
      .filter((column): column is ColumnMetadata => column !== undefined && !adapted.has(column));
    if (pending.length === 0) continue;
    const decodedByDriver = await probeDriverDecoding(driver, metadata, pending);
    for (const column of pending) {
      const inner = Array.isArray(column.transformer) ? undefined : column.transformer;
      column.transformer = jsonTextTransformer(inner, decodedByDriver.has(column.databaseName));
      // Not 'json' any more, so TypeORM neither stringifies nor re-parses the value itself.
      column.type = 'longtext';
      adapted.add(column);
    }
  }
}

/** The names of the columns whose values mysql2 hands over already decoded. */
async function probeDriverDecoding(
  driver: MysqlDriverLike,
  metadata: EntityMetadata,
  columns: ColumnMetadata[],
): Promise<Set<string>> {
  const quotedTable = quoteTable(
    { database: metadata.database, tableName: metadata.tableName },
    'mysql',
  );
  const selectColumns = columns
    .map((column) => quoteIdentifier(column.databaseName, 'mysql'))
    .join(', ');
  const connection = await driver.obtainMasterConnection();
  try {
    const fields = await new Promise<RawField[]>((resolve, reject) =>
      connection.query(
        `SELECT ${selectColumns} FROM ${quotedTable} WHERE 1 = 0`,
        (error, _rows, found) => (error ? reject(error) : resolve(found ?? [])),
      ),
    );
    // The classic `mysql` package never decodes JSON; mysql2 does unless told not to.
    const mysql2Decodes =
      (driver.isUsingMysql2?.() ?? true) && connection.config?.jsonStrings !== true;
    const decoded = fields.filter(
      (field) =>
        mysql2Decodes &&
        ((field.columnType ?? field.type) === MYSQL_TYPE_JSON || field.extendedFormat === 'json'),
    );
    return new Set(decoded.map((field) => field.name));
  } finally {
    connection.release();
  }
}

/** JSON as text: stringified on write (after `inner`), parsed on read unless already decoded. */
function jsonTextTransformer(
  inner: ValueTransformer | undefined,
  decodedByDriver: boolean,
): ValueTransformer {
  return {
    to(value: unknown): unknown {
      const encoded: unknown = inner ? inner.to(value) : value;
      return encoded === null || encoded === undefined ? encoded : JSON.stringify(encoded);
    },
    from(value: unknown): unknown {
      let decoded: unknown = value ?? null;
      if (decoded !== null && !decodedByDriver) {
        decoded = JSON.parse(
          Buffer.isBuffer(decoded) ? decoded.toString('utf8') : (decoded as string),
        ) as unknown;
      }
      return inner ? inner.from(decoded) : decoded;
    },
  };
}
