/** A value as a table cell: `-` for nothing, ISO time for a date, JSON for anything structured. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return value.toString();
  }
  return JSON.stringify(value) ?? '-';
}

/** Rows under a header, each column as wide as its widest cell, two spaces apart. */
export function formatTable(
  headers: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((text, column) => text.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `name: value` lines, the values aligned. */
export function formatFields(fields: ReadonlyArray<readonly [string, unknown]>): string {
  const width = Math.max(0, ...fields.map(([name]) => name.length + 1));
  return fields.map(([name, value]) => `${`${name}:`.padEnd(width)}  ${cell(value)}`).join('\n');
}
