import type { Rule } from 'eslint';

/** `geneva-drive/no-sql-from-values`: no value rendered into SQL text (SPEC §16.1). */
declare const rule: Rule.RuleModule;
export = rule;
