/**
 * The problem a key no schema declares makes: `<path><key> is not a known option`, and the known
 * key it most likely meant when one stands out (the same name in another case, or one edit away;
 * two for keys longer than four letters), so the message carries its fix.
 */
export function unknownOptionProblem(path: string, key: string, known: readonly string[]): string {
  const meant = closestKey(key, known);
  return `${path}${key} is not a known option${meant ? ` (did you mean ${path}${meant}?)` : ''}`;
}

/** The one known key nearest to `key` within the edit budget; null when none is, or several are. */
function closestKey(key: string, known: readonly string[]): string | null {
  const typed = key.toLowerCase();
  const budget = typed.length > 4 ? 2 : 1;
  let nearest: string | null = null;
  let nearestDistance = budget + 1;
  let tied = false;
  for (const candidate of known) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance < nearestDistance) {
      nearest = candidate;
      nearestDistance = distance;
      tied = false;
    } else if (distance === nearestDistance) {
      tied = true;
    }
  }
  return tied ? null : nearest;
}

/** Insertions, deletions, substitutions and swaps of neighbours (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const substitution = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(
        rows[i - 1][j] + 1,
        rows[i][j - 1] + 1,
        rows[i - 1][j - 1] + substitution,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
      }
    }
  }
  return rows[a.length][b.length];
}
