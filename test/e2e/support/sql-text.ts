/** `text` split at each `separator` outside '…' literals and "…" identifiers, trimmed, empty parts dropped. */
export function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quote) {
      if (char === quote) quote = null;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === separator) {
      parts.push(text.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

/** The statements of one query: a simple-query message may carry several, `;`-separated. */
export function splitStatements(sql: string): string[] {
  return splitOutsideQuotes(sql, ';');
}

/** The highest `$n` a statement uses: how many values are bound to it. */
export function placeholdersOf(statement: string): number {
  return Math.max(0, ...[...statement.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));
}
