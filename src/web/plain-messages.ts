import type { FieldErrors } from '../lib/errors';

/**
 * The dashboard says the API's validation messages in plain words. The API
 * keeps the reference's wording ("The contact type id field is required.", "The value.0 must be
 * a number."), which names parameters a person never sees; the page shows each message beside
 * its field, so it can speak of "this" field, or of a condition, without parameter names.
 */
const CONDITION_PARTS: Record<string, string> = { 'select field': 'the field', 'select operator': 'the comparison', value: 'the value', value2: 'the second value' };

const VARIANT_PARTS: Record<string, string> = { subject: 'subject', preheader: 'preheader', 'from name': 'sender name', 'template html': 'design', template_json: 'design' };

const RULES: Array<[RegExp, (...groups: string[]) => string]> = [
  [/^The variants\.\d+\.([a-z_ ]+?) (must|may) (.*)$/, (part, verb, rest) => `The ${VARIANT_PARTS[part] ?? part} ${verb} ${rest}`],
  [/^The test percent must be between (\d+) and (\d+)\.$/, (min, max) => `Choose a share between ${min}% and ${max}%.`],
  [/^The wait minutes must be between (\d+) and (\d+)\.$/, (min, max) => `Choose a wait between ${min} and ${max} minutes.`],
  [/^The events field is required\.$/, () => 'Choose at least one event.'],
  [/^The url (.*)$/, (rest) => `The URL ${rest}`],
  [/^The (?:subject|preheader|template html) has a Liquid error on (line \d+): (.*)$/, (line, rest) => `Liquid error on ${line}: ${rest}`],
  [/^The schedule date field is required when schedule type is 1\.$/, () => 'Choose the day to send it on.'],
  [/^The schedule time field is required when schedule type is 1\.$/, () => 'Choose the time to send it at.'],
  [/^The ([a-z ]+) id field is required\.$/, (thing) => `Choose ${article(thing)} ${thing}.`],
  [/^The selected ([a-z ]+) id is invalid\.$/, (thing) => `Choose ${article(thing)} ${thing} from the list.`],
  [/^The (select field|select operator|value2?)\.\d+ field is required\.$/, (part) => `Fill in ${CONDITION_PARTS[part]} of this condition.`],
  [/^The selected (select field|select operator|value2?)\.\d+ is invalid\.$/, (part) => `Choose ${CONDITION_PARTS[part]} of this condition from the list.`],
  [/^The (select field|select operator|value2?)\.\d+ (.*)$/, (part, rest) => `${capitalise(CONDITION_PARTS[part])} ${rest}`],
];

function article(thing: string): string {
  return /^[aeiou]/.test(thing) ? 'an' : 'a';
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** One message in plain words (unchanged when no rule applies). */
export function plainMessage(message: string): string {
  for (const [pattern, say] of RULES) {
    const match = pattern.exec(message);
    if (match) return say(...match.slice(1));
  }
  return message;
}

/** Every message of a form's errors in plain words, under the same fields. */
export function plainErrors(errors: FieldErrors): FieldErrors {
  return Object.fromEntries(Object.entries(errors).map(([name, messages]) => [name, messages.map(plainMessage)]));
}
