import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import { Order } from '../../test/fixtures/order.entity';

/** The entity's table, schema-qualified and quoted, for raw SQL. */
export function qualifiedTable(
  dataSource: DataSource,
  entity: EntityTarget<ObjectLiteral>,
): string {
  const metadata = dataSource.getMetadata(entity);
  const escape = (name: string) => dataSource.driver.escape(name);
  return metadata.schema
    ? `${escape(metadata.schema)}.${escape(metadata.tableName)}`
    : escape(metadata.tableName);
}

/** Inserts `count` orders (heroes) with one statement and resolves them. */
export async function createOrders(dataSource: DataSource, count: number): Promise<Order[]> {
  const rows = await dataSource.query<Array<{ id: number }>>(
    `INSERT INTO ${qualifiedTable(dataSource, Order)} (status)
     SELECT 'new' FROM generate_series(1, $1::int) RETURNING id`,
    [count],
  );
  return rows.map(({ id }) => Object.assign(new Order(), { id, status: 'new' }));
}
