import { inlineStatement } from '../../../lib/persistence/postgres-prepared-statements';

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

/**
 * The library's server-side prepared statements as seen in the messages sent (`PREPARE
 * geneva_drive_<n>_<generation> AS …`), so that an `EXECUTE` reads as the statement it runs. A
 * statement shape keeps its number on every connection; only the generation differs.
 */
export class PreparedStatementLog {
  private readonly templates = new Map<string, string>();

  /** Remembers the PREPAREs of a message. */
  remember(sql: string): void {
    for (const statement of splitStatements(sql)) {
      const prepare = /^PREPARE (geneva_drive_\d+)_\d+ AS (.*)$/s.exec(statement);
      if (prepare) this.templates.set(prepare[1], prepare[2]);
    }
  }

  /** The statement an `EXECUTE` runs, values in place; null for other statements or an unseen PREPARE. */
  expand(statement: string): string | null {
    const execute = /^EXECUTE (geneva_drive_\d+)_\d+(?:\((.*)\))?$/s.exec(statement);
    const template = execute && this.templates.get(execute[1]);
    if (!execute || !template) return null;
    return inlineStatement({
      template,
      values: execute[2] ? splitOutsideQuotes(execute[2], ',') : [],
    });
  }
}
