import type { FieldErrors } from '../../lib/errors';
import { liquidSyntaxError } from '../../mail/liquid';

/**
 * Refuses, field by field, a subject, preheader or body whose Liquid does not parse, naming the
 * line, so that nothing that cannot render is ever saved (the send would go out as written).
 */
export function liquidErrors(fields: Partial<Record<string, string | null | undefined>>, errors: FieldErrors): void {
  for (const [name, source] of Object.entries(fields)) {
    if (!source || errors[name]) continue;
    const problem = liquidSyntaxError(source);
    if (!problem) continue;
    // "on line 3: …" when the parser named a line; a bound of the whole source has none.
    const where = /^line \d+:/.test(problem) ? ` on ${problem}` : `: ${problem}`;
    errors[name] = [`The ${name.replace(/_/g, ' ')} has a Liquid error${where}.`];
  }
}
