/**
 * Scenario reports go straight to stdout (not through jest's console, which adds a stack trace
 * to every line), so CI logs show what each scenario did and checked.
 */
export function report(title: string, lines: string[]): void {
  process.stdout.write(
    `\n[reliability] ${title}\n${lines.map((line) => `  ${line}`).join('\n')}\n`,
  );
}

/** Random integer in [min, max]. */
export function between(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}
